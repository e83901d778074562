import Logging

/// Runs a plan's steps on a store of any engine, so that the store is never left
/// half-migrated: each step reads what the previous one left and writes into the
/// ``MigrationWorkspace`` of the store's ``MigrationBackend``.
///
/// - Consecutive in-place steps run together, in one transaction, where the workspace says
///   (the store itself, or a copy of it).
/// - A set-based or streamed step writes a new output, which is swapped in once it is
///   complete and carries the original's identity; a failed one is discarded.
/// - Consecutive streamed steps fused into one pass (``MigrationPlan/Fusion``) write one
///   output, swapped in as one step's.
///
/// The caller holds the backend's lock.
struct MigrationRun {
    let migrator: ProgressiveMigrator
    let plan: MigrationPlan
    let backend: any MigrationBackend
    /// What each step weighs in the progress reported.
    let workload: MigrationWorkload
    /// Called with each report, besides ``ProgressiveMigrator/progressUpdates()``.
    let onProgress: (@Sendable (MigrationProgress) -> Void)?

    var logger: Logger { migrator.logger }
    var store: StoreURL { backend.store }

    func run() async throws {
        let original = try await PersistentStore.metadata(at: store)
        let workspace = try await backend.prepareWorkspace(for: plan, logger: logger)
        do {
            try await run(in: workspace, original: original)
            await workspace.cleanUp()
        } catch is MigrationAbort {
            // As a killed process: what the run wrote stays, for the next run to remove.
            await workspace.abandon()
            throw MigrationAbort()
        } catch {
            // Cleaning up must reach the database even when the run was cancelled.
            await DatabaseCancellation.shielded { await workspace.cleanUp() }
            throw error
        }
    }

    private func run(in workspace: any MigrationWorkspace, original: StoreMetadata) async throws {
        var current = store
        var index = 0
        while index < plan.steps.count {
            try checkCancellation(workspace)
            try await workspace.holdWriters()
            if plan.steps[index].strategy == .inPlace {
                await removeAbandonedUnlessContinuable(in: workspace)
                var group: [Int] = []
                while index < plan.steps.count, plan.steps[index].strategy == .inPlace {
                    group.append(index)
                    index += 1
                }
                current = try await runInPlace(group, from: current, in: workspace, original: original)
                continue
            }
            if let (output, lastStep) = try await outputFinishedByAKilledRun(fromStep: index, reading: current, in: workspace) {
                current = try await takeFinished(output, steps: index...lastStep, replacing: current, in: workspace)
                index = lastStep + 1
                continue
            }
            if plan.steps[index].fusionWithNext?.isFused == true {
                let group = Array(plan.steps.fusedPass(containing: index))
                current = try await runFused(group, from: current, in: workspace, original: original)
                index = group.last! + 1
                continue
            }
            current = try await runIntoOutput(index, from: current, in: workspace, original: original)
            index += 1
        }
        // Where nothing is left to swap in, the migration is done: no longer cancellable.
        if current != store { try checkCancellation(workspace) }
        let (migrator, lastStep) = (self.migrator, plan.steps.count)
        try await workspace.finish(with: current, lockLetGo: { try migrator.pass(.lockLetGo) }) { try migrator.pass(.swapping(step: lastStep)) }
        try migrator.pass(.migrated)
    }

    func checkCancellation(_ workspace: any MigrationWorkspace) throws {
        if Task.isCancelled { throw cancelled(workspace) }
    }

    func cancelled(_ workspace: any MigrationWorkspace) -> MigrationError {
        MigrationError(
            .cancelled,
            "the migration was cancelled",
            hint: "\(workspace.storeAfterFailure); run the migration again",
            store: store.description
        )
    }

    /// What a failed step is reported as: once the run is cancelled, whatever failed failed
    /// because of it (an interrupted statement, a refused one); a full disk, a read-only or
    /// damaged file, a server going down as that, with what to do; a ``MigrationError`` as
    /// it is; anything else as `otherwise` says.
    func failure(_ error: any Error, in workspace: any MigrationWorkspace, doing: String, otherwise: () -> MigrationError) -> any Error {
        if error is MigrationAbort { return error }
        if Task.isCancelled { return cancelled(workspace) }
        if let storage = MigrationError.storage(error, doing: doing, store: store, afterwards: workspace.storeAfterFailure) { return storage }
        if let error = error as? MigrationError { return error.at(store) }
        return otherwise()
    }

    /// The destination's metadata: its model's hashes, the store's identity and the keys
    /// the store carried that are not Core Data's; on a way back, the version it was taken
    /// back from (the first such, through several rollbacks), which a way forward clears.
    private func metadata(for model: ManagedObjectModel, original: StoreMetadata) -> StoreMetadata {
        var metadata = original.migrated(to: model, storeType: store.storeType)
        metadata.migratedBackFrom = plan.goesBack ? original.migratedBackFrom ?? plan.storeVersion.name : nil
        return metadata
    }

    func stepLabel(_ index: Int) -> String {
        "\(index + 1)/\(plan.steps.count) \(plan.steps[index].source.name) → \(plan.steps[index].destination.name)"
    }

    /// Runs consecutive in-place steps in one transaction; returns where they ran.
    private func runInPlace(
        _ group: [Int],
        from current: StoreURL,
        in workspace: any MigrationWorkspace,
        original: StoreMetadata
    ) async throws -> StoreURL {
        let started = ContinuousClock.now
        let works = group.compactMap { index -> (inPlace: InPlaceMigration, metadata: StoreMetadata)? in
            guard case .inPlace(let inPlace) = plan.steps[index].work else { return nil }
            return (inPlace, metadata(for: plan.steps[index].destination, original: original))
        }
        let target = try await workspace.inPlaceTarget(from: current, firstStep: group[0])
        let (source, destination) = (plan.steps[group[0]].source, plan.steps[group[group.count - 1]].destination)
        let (checksIndexes, afterwards, logger) = (!original.isForeign, workspace.storeAfterFailure, self.logger)
        do {
            let run: @Sendable (any DatabaseConnection) throws -> Void = { connection in
                // What the store already had that its version does not create stays through
                // steps run in place, which are not to blame: a table or column of its own
                // and the layout after is not checked; an index it lacked and only the
                // indexes after are not.
                let before = try StoreLayoutCheck(existingStoreOn: connection, model: source, checksIndexes: checksIndexes)
                    .differencesByKind(on: connection)
                for work in works { try work.inPlace.run(on: connection, metadata: work.metadata) }
                guard before.tables.isEmpty else {
                    logger.notice(
                        "the store differed from what '\(source.name)' creates before it was migrated in place, so its layout after is not checked: \(before.tables.joined(separator: "; "))"
                    )
                    return
                }
                // Before the commit: a store laid out otherwise is rolled back.
                try StoreLayoutCheck(existingStoreOn: connection, model: destination, checksIndexes: checksIndexes && before.indexes.isEmpty)
                    .verify(on: connection, afterwards: afterwards)
            }
            if target.isStore {
                try await workspace.writeStore(run)
            } else {
                try await workspace.withDatabase(target.url, isDurable: false) { database in
                    try await database.write(run)
                }
            }
        } catch {
            let names = group.map { "\(plan.steps[$0].source.name) → \(plan.steps[$0].destination.name)" }.joined(separator: ", ")
            throw failure(error, in: workspace, doing: "the in-place migration \(names) failed and was rolled back") {
                MigrationError(
                    .store,
                    "the in-place migration \(names) failed and was rolled back",
                    hint: "\(workspace.storeAfterFailure); report this with the output of `migrate --plan`",
                    store: store.description,
                    underlying: error
                )
            }
        }
        for index in group {
            logger.info(
                "migration stage",
                metadata: [
                    LoggingKeys.migrationStep: "\(stepLabel(index))",
                    LoggingKeys.migrationStage: "\(MigrationProgress.Stage.inPlace.rawValue)",
                    LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
                ]
            )
            report(index, since: workload.start(ofStep: group[0], at: started), stage: .inPlace, fraction: 1)
            try migrator.pass(.stepFinished(step: index + 1))
        }
        return target.url
    }

    /// Runs a set-based or streamed step into a new output and swaps it in; returns what
    /// the next step reads.
    func runIntoOutput(_ index: Int, from current: StoreURL, in workspace: any MigrationWorkspace, original: StoreMetadata) async throws -> StoreURL {
        let step = plan.steps[index]
        let started = ContinuousClock.now
        let target = try await outputAndCheckpointing(forStep: index, from: current, in: workspace)
        let (output, checkpointing) = (target.url, target.checkpointing)
        do {
            if case .setBased(let setBased) = step.work {
                try await runSetBased(setBased, index: index, from: current, to: output, in: workspace)
            } else {
                try await runStreamed(
                    index,
                    from: current,
                    to: output,
                    options: workspace.outputOptions(checkpointed: checkpointing != nil),
                    checkpointing: checkpointing
                )
            }
            try await completeOutput(output, of: index, in: workspace, original: original)
            if let record = target.record {
                do {
                    try await workspace.recordFinished(output, fingerprint: record.fingerprint, sourceMark: record.sourceMark)
                } catch {
                    // Only what a next run after a kill would not make again: the output is complete.
                    logger.warning(
                        "the finished output of step \(stepLabel(index)) could not be recorded; a run after a kill would make it again: \(error)"
                    )
                }
            }
            let migrator = self.migrator
            let next = try await workspace.swapIn(output, replacing: current) { try migrator.pass(.swapping(step: index + 1)) }
            logger.info(
                "migration stage",
                metadata: [
                    LoggingKeys.migrationStep: "\(stepLabel(index))",
                    LoggingKeys.migrationStage: "\(step.strategy.rawValue)",
                    LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
                ]
            )
            try migrator.pass(.stepFinished(step: index + 1))
            return next
        } catch {
            if !(error is MigrationAbort) { await DatabaseCancellation.shielded { await workspace.discard(output) } }
            throw failure(error, in: workspace, doing: "step \(step.source.name) → \(step.destination.name) failed") {
                MigrationError(
                    .store,
                    "step \(step.source.name) → \(step.destination.name) failed",
                    hint: workspace.storeAfterFailure,
                    store: store.description,
                    underlying: error
                )
            }
        }
    }

    /// The output a killed run finished of the last of `steps` (``outputFinishedByAKilledRun(fromStep:reading:in:)``)
    /// becomes what the next step reads, as if the steps had run; returns it.
    private func takeFinished(
        _ output: StoreURL,
        steps: ClosedRange<Int>,
        replacing current: StoreURL,
        in workspace: any MigrationWorkspace
    ) async throws -> StoreURL {
        let migrator = self.migrator
        let next = try await workspace.swapIn(output, replacing: current) { try migrator.pass(.swapping(step: steps.upperBound + 1)) }
        for index in steps {
            report(index, since: workload.start(ofStep: index), stage: .validateAndSave, fraction: 1)
            try migrator.pass(.stepFinished(step: index + 1))
        }
        return next
    }

    /// Hands step `index`'s new store over: every index (the step's writes may have
    /// deferred them), no association table, the original's identity; then checks it is
    /// laid out as the step's destination creates it (``StoreLayoutCheck``), or fails.
    func completeOutput(_ output: StoreURL, of index: Int, in workspace: any MigrationWorkspace, original: StoreMetadata) async throws {
        let destination = plan.steps[index].destination
        let metadata = metadata(for: destination, original: original)
        let afterwards = workspace.storeAfterFailure
        try await workspace.withDatabase(output, isDurable: true) { database in
            // The checkpoint first: without it the output is never continued.
            try await StepCheckpointTable(database: database).drop()
            try await AssociationTable(database: database).drop()
            let schema = StoreSchema(model: destination, dialect: database.dialect)
            let indexes = schema.indexStatements()
            try await database.write { connection in
                try schema.explainingUniqueIndexes(on: connection) {
                    for statement in indexes { try connection.execute(statement) }
                }
                try StoreCreation.writeMetadata(metadata, on: connection)
                try StoreLayoutCheck(schema: schema).verify(on: connection, afterwards: afterwards)
            }
        }
    }

    /// Each mapping model of the step in turn, through the step's migration manager.
    private func runStreamed(
        _ index: Int,
        from current: StoreURL,
        to output: StoreURL,
        options: PersistentStore.Options,
        checkpointing: StepCheckpointing?
    ) async throws {
        let step = plan.steps[index]
        let stepCount = plan.steps.count
        let migrator = self.migrator
        let passes = step.mappingModels.count
        let (run, start) = (self, workload.start(ofStep: index))
        // What the passes so far made: a later pass's look-ups may name their mappings.
        var made = StepAssociations()
        for (pass, mapping) in step.mappingModels.enumerated() {
            var configuration = MigrationManager.Configuration(
                sourceModel: step.source,
                destinationModel: step.destination,
                mappingModel: mapping,
                policies: migrator.chain.policies,
                batchSize: migrator.batchSize,
                destinationOptions: options,
                logger: migrator.logger(forStep: index, of: stepCount, step)
            )
            configuration.stepAssociations = made
            configuration.faultInjection = migrator.faultInjection
            configuration.throttle = migrator.throttle
            configuration.stepNumber = index + 1
            configuration.checkpointing = checkpointing
            let manager = step.managerType.init(configuration: configuration)
            manager.setProgressHandler { progress in
                guard let progress = progress.pass(pass, of: passes) else { return }
                run.report(index, since: start, StepReport(progress))
            }
            made = try await manager.migratePass(from: current, to: output)
        }
    }

    /// The step's `INSERT … SELECT` statements on the output's writer, which reads the
    /// source through ``SourceAccess``; then the validation.
    private func runSetBased(
        _ setBased: SetBasedMigration,
        index: Int,
        from current: StoreURL,
        to output: StoreURL,
        in workspace: any MigrationWorkspace
    ) async throws {
        let step = plan.steps[index]
        let started = ContinuousClock.now
        guard let access = SourceAccess(source: current, destination: output) else {
            throw MigrationError(
                .store,
                "the set-based step \(step.source.name) → \(step.destination.name) cannot read its source from its output",
                hint: "\(workspace.storeAfterFailure); report this with the output of `migrate --plan`",
                store: store.description
            )
        }
        // Indexes the workspace defers are built once the rows are in, before the validation reads.
        let created = try await PersistentStore.open(output, model: step.destination, options: workspace.outputOptions, logger: logger)
        await created.close()
        let schema = created.schema
        let indexes = schema.indexStatements()
        let written = try await workspace.withDatabase(output, isDurable: false) { database in
            try await access.open(on: database)
            let written = try await database.write { connection in
                // Nested: the rows stay in while the indexes' failure is explained.
                try schema.explainingUniqueIndexes(on: connection) {
                    let written = try setBased.run(on: connection, sourceSchema: access.schema)
                    try schema.explainingUniqueIndexes(on: connection) {
                        for statement in indexes { try connection.execute(statement) }
                    }
                    return written
                }
            }
            try await access.close(on: database)
            return written
        }
        try await completeSetBasedStep(index, written: written, since: started, destination: output)
    }
}
