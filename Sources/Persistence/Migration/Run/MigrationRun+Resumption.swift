import Logging

extension MigrationRun {
    /// Where step `index` writes, and how it records its progress: a new output, or the one
    /// an interrupted run of the same step on the same, unchanged store left, which the step
    /// then continues from its last batch (``StepCheckpoint``), or takes as it is when that
    /// run finished it (``FinishedOutput``). What killed runs left and this one does not
    /// continue is removed, saying why.
    func outputAndCheckpointing(
        forStep index: Int,
        from current: StoreURL,
        in workspace: any MigrationWorkspace
    ) async throws -> StepOutput {
        let step = plan.steps[index]
        let abandoned = workspace.abandonedOutputs
        let fingerprint = step.resumptionFingerprint
        // Continued, or taken as it is when finished: a step whose hooks may keep what a
        // later step needs is not, and a set-based step's SQL keeps nothing.
        let whyNotResumable = step.whyNotResumable(policies: migrator.chain.policies)
        let isTakenWhenFinished = whyNotResumable == nil || step.strategy == .setBased
        // On PostgreSQL a mark reads every table: taken only where it is used.
        let mark =
            whyNotResumable == nil || (isTakenWhenFinished && workspace.recordsFinishedOutputs)
            ? try await workspace.sourceMark(of: current) : nil
        if isTakenWhenFinished, let mark,
            let complete = workspace.finishedOutputs.first(where: { $0.fingerprint == fingerprint && $0.sourceMark == mark }),
            try await workspace.storeUnchanged(since: mark)
        {
            // What killed runs left of later steps stays, for them to continue.
            let output = try await workspace.adopt(complete.output, forStep: index)
            logger.notice(
                "step \(stepLabel(index)) was finished by an interrupted run: its output is taken as it is",
                metadata: [LoggingKeys.migrationStep: "\(stepLabel(index))"]
            )
            return StepOutput(url: output, isComplete: true)
        }
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
