import Logging
import Synchronization

extension MigrationRun {
    /// Runs `group`, consecutive streamed steps each fused with the next
    /// (``MigrationPlan/Fusion``), as one pass: their managers run side by side, each
    /// step's carried instances handed to the next in memory, batch by batch. Only the
    /// last step's store is kept; it is completed and swapped in as a streamed step's is.
    /// The intermediate stores (what the earlier steps made as SQL) are discarded.
    ///
    /// When the pass turns out not to be fusable after all (``StepsNotFusable``: a policy
    /// made no destination for some source), its output is discarded and the steps run one
    /// after the other. Returns what the next step reads.
    func runFused(_ group: [Int], from current: StoreURL, in workspace: any MigrationWorkspace, original: StoreMetadata) async throws -> StoreURL {
        let started = ContinuousClock.now
        let placed = try await outputsAndCheckpointing(forFusedPass: group, from: current, in: workspace)
        let outputs = placed.map(\.output)
        let last = group[group.count - 1]
        let names = group.map { "\(plan.steps[$0].source.name) → \(plan.steps[$0].destination.name)" }.joined(separator: ", ")
        do {
            let options = workspace.outputOptions(checkpointed: placed.contains { $0.checkpointing != nil })
            try await runFusedPass(
                group,
                from: current,
                outputs: outputs,
                checkpointing: placed.map(\.checkpointing),
                options: options,
                workspace: workspace
            )
            // Cancelled once the steps' stages were done: nothing is swapped in.
            try checkCancellation(workspace)
            for output in outputs.dropLast() { await workspace.discard(output) }
            try await completeOutput(outputs[outputs.count - 1], of: last, in: workspace, original: original)
            let migrator = self.migrator
            let next = try await workspace.swapIn(outputs[outputs.count - 1], replacing: current) { try migrator.pass(.swapping(step: last + 1)) }
            for index in group {
                logger.info(
                    "migration stage",
                    metadata: [
                        LoggingKeys.migrationStep: "\(stepLabel(index))",
                        LoggingKeys.migrationStage: "\(MigrationPlan.Strategy.streamed.rawValue)",
                        LoggingKeys.fusedSteps: "\(group.map { String($0 + 1) }.joined(separator: "+"))",
                        LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
                    ]
                )
            }
            try migrator.pass(.stepFinished(step: last + 1))
            return next
        } catch let refusal as StepsNotFusable {
            await DatabaseCancellation.shielded { for output in outputs { await workspace.discard(output) } }
            logger.warning(
                "steps run one after the other",
                metadata: [
                    LoggingKeys.migrationStep: "\(group.map(stepLabel).joined(separator: ", "))",
                    LoggingKeys.reason: "\(refusal.reason)",
                ]
            )
            var next = current
            for index in group {
                try checkCancellation(workspace)
                try await workspace.holdWriters()
                next = try await runIntoOutput(index, from: next, in: workspace, original: original)
            }
            return next
        } catch {
            if !(error is MigrationAbort) { await DatabaseCancellation.shielded { for output in outputs { await workspace.discard(output) } } }
            throw failure(error, in: workspace, doing: "the fused steps \(names) failed") {
                MigrationError(
                    .store,
                    "the fused steps \(names) failed",
                    hint: workspace.storeAfterFailure,
                    store: store.description,
                    underlying: error
                )
            }
        }
    }

    /// Opens the group's stores (its source read-only, each step's output) and runs every
    /// step's manager in a task of its own, linked to its neighbours.
    private func runFusedPass(
        _ group: [Int],
        from current: StoreURL,
        outputs: [StoreURL],
        checkpointing: [StepCheckpointing?],
        options: PersistentStore.Options,
        workspace: any MigrationWorkspace
    ) async throws {
        var stores = [try await PersistentStore.open(current, model: plan.steps[group[0]].source, options: .readOnly, logger: logger)]
        do {
            for (position, index) in group.enumerated() {
                stores.append(
                    try await PersistentStore.open(outputs[position], model: plan.steps[index].destination, options: options, logger: logger)
                )
            }
        } catch {
            for store in stores { await store.close() }
            throw error
        }
        let links = group.dropLast().map { index -> FusedLink in
            guard case .fused(let carried)? = plan.steps[index].fusionWithNext else { return FusedLink(carried: []) }
            return FusedLink(carried: carried)
        }
        let progress = FusedProgress()
        let managers = group.enumerated().map { position, index in
            manager(forStep: index, position: position, checkpointing: checkpointing[position], options: options, progress: progress)
        }
        let neighbours = group.indices.map { position in
            FusedNeighbours(
                upstream: position > 0 ? links[position - 1] : nil,
                downstream: position < links.count ? links[position] : nil
            )
        }
        let (migrator, stepsInGroup, openStores) = (self.migrator, group, stores)
        /// Closes the links of the step at `position` with its neighbours.
        @Sendable func closeLinks(of position: Int, with error: any Error) {
            if position > 0 { links[position - 1].close(error) }
            if position < links.count { links[position].close(error) }
        }
        let failures = await withTaskGroup(of: FusedOutcome.self) { tasks in
            for (position, manager) in managers.enumerated() {
                tasks.addTask {
                    do {
                        _ = try await manager.runStages(
                            source: openStores[position],
                            destination: openStores[position + 1],
                            fused: neighbours[position]
                        )
                        // Its neighbours wait for nothing more from it: one that does (the
                        // run and the plan disagree) stops rather than hangs.
                        closeLinks(
                            of: position,
                            with: StepsNotFusable(reason: "step \(stepsInGroup[position] + 1) finished before its neighbour was done with it")
                        )
                        return .finished(position: position)
                    } catch {
                        // The neighbours stop waiting for this step.
                        closeLinks(of: position, with: error)
                        return .failed(FusedFailure(error: error, wasCancelled: Task.isCancelled))
                    }
                }
            }
            var failures: [FusedFailure] = []
            for await outcome in tasks {
                switch outcome {
                case .finished(let position) where position < stepsInGroup.count - 1:
                    // Passed on the migration's own task, as an unfused step's end is; the
                    // last step finishes with the swap.
                    do {
                        try migrator.pass(.stepFinished(step: stepsInGroup[position] + 1))
                    } catch {
                        failures.append(FusedFailure(error: error, wasCancelled: false))
                        for link in links { link.close(error) }
                        tasks.cancelAll()
                    }
                case .finished:
                    break
                case .failed(let failure):
                    // The others stop: what they would still write is thrown away.
                    failures.append(failure)
                    tasks.cancelAll()
                }
            }
            return failures
        }
        for store in stores { await store.close() }
        if let error = rootCause(of: failures, in: workspace) { throw error }
    }

    /// A fused step's manager: configured as an unfused step's, its progress placed in the
    /// whole migration. Its links go with its stores (``FusedNeighbours``).
    private func manager(
        forStep index: Int,
        position: Int,
        checkpointing: StepCheckpointing?,
        options: PersistentStore.Options,
        progress fusedProgress: FusedProgress
    ) -> MigrationManager {
        let step = plan.steps[index]
        var configuration = MigrationManager.Configuration(
            sourceModel: step.source,
            destinationModel: step.destination,
            mappingModel: step.mappingModels[0],
            policies: migrator.chain.policies,
            batchSize: migrator.batchSize,
            destinationOptions: options,
            logger: migrator.logger(forStep: index, of: plan.steps.count, step)
        )
        configuration.faultInjection = migrator.faultInjection
        configuration.throttle = migrator.throttle
        configuration.stepNumber = index + 1
        configuration.checkpointing = checkpointing
        let manager = step.managerType.init(configuration: configuration)
        let (run, start) = (self, workload.start(ofStep: index))
        manager.setProgressHandler { progress in
            // The steps advance side by side; the whole is reported as if they ran in turn.
            let fraction = run.workload.fraction(step: index, stepFraction: progress.stepFractionCompleted)
            fusedProgress.report(position: position, fraction: fraction, isEnd: progress.stage == .finished) {
                run.report(index, since: start, StepReport(progress))
            }
        }
        return manager
    }

    /// What the fused steps' failures come to: an abort; then a pass that cannot be fused
    /// after all (the steps then run on their own, which meets any other failure again);
    /// then a step's own failure before the ones it caused its neighbours
    /// (``FusedLink/Closed``, cancelled); a cancellation as the migration's.
    private func rootCause(of failures: [FusedFailure], in workspace: any MigrationWorkspace) -> (any Error)? {
        guard !failures.isEmpty else { return nil }
        let causes = failures.map { (error: Self.cause(of: $0.error), wasCancelled: $0.wasCancelled) }
        if let abort = causes.first(where: { $0.error is MigrationAbort }) { return abort.error }
        if let refusal = causes.first(where: { $0.error is StepsNotFusable }) { return refusal.error }
        if let own = failures.first(where: { !($0.error is FusedLink.Closed) && !$0.wasCancelled }) { return own.error }
        if causes.contains(where: { $0.wasCancelled || $0.error is CancellationError }) { return cancelled(workspace) }
        return causes[0].error
    }

    /// The error a chain of closed links started from.
    private static func cause(of error: any Error) -> any Error {
        var error = error
        while let closed = error as? FusedLink.Closed { error = closed.cause }
        return error
    }
}

/// How one step of a fused pass ended.
private enum FusedOutcome: Sendable {
    case finished(position: Int)
    case failed(FusedFailure)
}

/// How one step of a fused pass failed.
private struct FusedFailure: Sendable {
    let error: any Error
    /// Whether its task was cancelled then: what it threw is the cancellation's doing.
    let wasCancelled: Bool
}
