import Logging

extension MigrationRun {
    /// Where step `index` writes, and how it records its progress: a new output, or the one
    /// an interrupted run of the same step on the same, unchanged store left, which the step
    /// then continues from its last batch (``StepCheckpoint``). What killed runs left and
    /// this one does not continue is removed, saying why.
    func outputAndCheckpointing(
        forStep index: Int,
        from current: StoreURL,
        in workspace: any MigrationWorkspace
    ) async throws -> StepOutput {
        let step = plan.steps[index]
        let abandoned = workspace.abandonedOutputs
        let fingerprint = step.resumptionFingerprint
        let whyNotResumable = step.whyNotResumable(policies: migrator.chain.policies)
        let isTakenWhenFinished = isTakenWhenFinished(index)
        // On PostgreSQL a mark reads every table: taken only where it is used.
        let mark =
            whyNotResumable == nil || (isTakenWhenFinished && workspace.recordsFinishedOutputs)
            ? try await workspace.sourceMark(of: current) : nil
        let record = isTakenWhenFinished ? mark.map { StepOutput.Record(fingerprint: fingerprint, sourceMark: $0) } : nil
        if let why = whyNotResumable {
            if !abandoned.isEmpty { logger.notice("starting step \(stepLabel(index)) from its first row: \(why)") }
            await workspace.removeAbandoned()
            return StepOutput(url: workspace.newOutput(forStep: index), record: record)
        }
        guard let mark else {
            if !abandoned.isEmpty {
                logger.notice(
                    "starting step \(stepLabel(index)) from its first row: it reads a file of this run that a next run would not find as it is (changed in place after a step wrote it, written by a fused pass, or made from one such)"
                )
            }
            await workspace.removeAbandoned()
            return StepOutput(url: workspace.newOutput(forStep: index))
        }
        var why: String?
        for candidate in abandoned {
            let saved: SavedStep?
            do {
                saved = try await workspace.withDatabase(candidate, isDurable: true) { try await StepCheckpointTable(database: $0).read() }
            } catch {
                why = "what it left cannot be read (\(error))"
                continue
            }
            guard let saved, saved.fingerprint == fingerprint else {
                why = why ?? "it was another step, or wrote no batch"
                continue
            }
            guard FinishedOutput.lineage(of: saved.sourceMark) == FinishedOutput.lineage(of: mark) else {
                why = "it read another output of an earlier step"
                continue
            }
            guard saved.checkpoint.stage != .relationships else {
                why = "it was setting relationships one instance at a time"
                continue
            }
            guard try await workspace.storeUnchanged(since: saved.sourceMark) else {
                why = "the store was written to since (or, on SQLite, the machine restarted)"
                continue
            }
            let output = try await workspace.adopt(candidate, forStep: index)
            await workspace.removeAbandoned()
            logResumption(of: "step \(stepLabel(index))", saved: saved)
            return StepOutput(
                url: output,
                checkpointing: StepCheckpointing(fingerprint: fingerprint, sourceMark: saved.sourceMark, resumeFrom: saved),
                record: StepOutput.Record(fingerprint: fingerprint, sourceMark: saved.sourceMark)
            )
        }
        if let why { logger.notice("starting step \(stepLabel(index)) from its first row: an interrupted run left its output, but \(why)") }
        await workspace.removeAbandoned()
        return StepOutput(
            url: workspace.newOutput(forStep: index),
            checkpointing: StepCheckpointing(fingerprint: fingerprint, sourceMark: mark, resumeFrom: nil),
            record: record
        )
    }

    /// Whether step `index`'s complete output is recorded, and taken as it is by a next run
    /// after a kill (``FinishedOutput``): a set-based or streamed step on its own (not in a
    /// fused pass) whose SQL or hooks keep nothing a later step needs (set-based, or
    /// resumable).
    func isTakenWhenFinished(_ index: Int) -> Bool {
        let step = plan.steps[index]
        guard step.strategy != .inPlace, step.fusionWithNext?.isFused != true, index == 0 || plan.steps[index - 1].fusionWithNext?.isFused != true
        else { return false }
        return step.strategy == .setBased || step.whyNotResumable(policies: migrator.chain.policies) == nil
    }

    /// The output a killed run finished of the furthest step it reached from step `index`
    /// on, reading `current` (steps `index` through `lastStep`, each recorded as made from
    /// the one before: ``FinishedOutput/mark``), when the store is unchanged since; adopted
    /// as the output of `lastStep`. `nil` when there is none: the step runs.
    func outputFinishedByAKilledRun(
        fromStep index: Int,
        reading current: StoreURL,
        in workspace: any MigrationWorkspace
    ) async throws -> (output: StoreURL, lastStep: Int)? {
        let finished = workspace.finishedOutputs
        guard !finished.isEmpty, isTakenWhenFinished(index), let mark = try await workspace.sourceMark(of: current) else { return nil }
        let markLines = FinishedOutput.lines(of: mark)
        var furthest: (output: FinishedOutput, lastStep: Int)?
        for output in finished {
            let lines = FinishedOutput.lines(of: output.sourceMark)
            guard lines.count >= markLines.count, Array(lines.prefix(markLines.count)) == markLines else { continue }
            // A step's fingerprint and its output's identity for each step between.
            let between = Array(lines.dropFirst(markLines.count))
            let lastStep = index + between.count / 2
            guard between.count % 2 == 0, lastStep < plan.steps.count, output.fingerprint == plan.steps[lastStep].resumptionFingerprint,
                (index...lastStep).allSatisfy(isTakenWhenFinished),
                between.indices.filter({ $0 % 2 == 0 }).allSatisfy({ between[$0] == plan.steps[index + $0 / 2].resumptionFingerprint })
            else { continue }
            if lastStep > furthest?.lastStep ?? -1 { furthest = (output, lastStep) }
        }
        guard let furthest, try await workspace.storeUnchanged(since: mark) else { return nil }
        let output = try await workspace.adopt(furthest.output.output, forStep: furthest.lastStep)
        let steps = index == furthest.lastStep ? "step \(stepLabel(index)) was" : "steps \(stepLabel(index)) to \(stepLabel(furthest.lastStep)) were"
        logger.notice(
            "\(steps) finished by an interrupted run: the output is taken as it is",
            metadata: [LoggingKeys.migrationStep: "\(stepLabel(furthest.lastStep))"]
        )
        return (output, furthest.lastStep)
    }

    /// Before steps that run in place: removes what killed runs left, unless a later step or
    /// fused pass of this plan may continue some of it (its fingerprint, the store unchanged
    /// since its mark), so that what cannot be used does not sit beside the copy the steps
    /// make (on SQLite) until a streamed step decides.
    func removeAbandonedUnlessContinuable(in workspace: any MigrationWorkspace) async {
        let abandoned = workspace.abandonedOutputs
        guard !abandoned.isEmpty else { return }
        let fingerprints = plan.continuableFingerprints
        for complete in workspace.finishedOutputs where fingerprints.contains(complete.fingerprint) {
            if (try? await workspace.storeUnchanged(since: complete.sourceMark)) == true { return }
        }
        for candidate in abandoned {
            guard let saved = try? await workspace.withDatabase(candidate, isDurable: true, { try await StepCheckpointTable(database: $0).read() }),
                fingerprints.contains(saved.fingerprint), (try? await workspace.storeUnchanged(since: saved.sourceMark)) == true
            else { continue }
            return
        }
        await workspace.removeAbandoned()
    }

    /// "resuming step 1/1 BookStore 4 → BookStore 5 at batch 613 of 1000 of PublicationToPublication",
    /// where `steps` is "step 1/1 BookStore 4 → BookStore 5" and `saved` the step's output,
    /// or that of a fused pass's last step.
    func logResumption(of steps: String, saved: SavedStep) {
        let checkpoint = saved.checkpoint
        let batchSize = max(migrator.batchSize, 1)
        let place: String
        if checkpoint.stage == .validation {
            place = "at its validation"
        } else if let mapping = checkpoint.mapping {
            let batches = max(((saved.sourceRows[mapping] ?? 0) + batchSize - 1) / batchSize, checkpoint.done / batchSize + 1)
            place = "at batch \(checkpoint.done / batchSize + 1) of \(batches) of \(mapping)"
        } else if !checkpoint.createdMappings.isEmpty {
            place = "after \(checkpoint.createdMappings.joined(separator: ", "))"
        } else {
            place = "at its first batch"
        }
        logger.notice(
            "resuming \(steps) \(place)",
            metadata: [
                LoggingKeys.migrationStep: "\(steps)",
                LoggingKeys.rows: "\(checkpoint.done)",
            ]
        )
    }
}
