import Logging

extension MigrationRun {
    /// Where each step of the fused pass `group` writes, and how it records its progress:
    /// new outputs, or the ones an interrupted run of the same pass on the same, unchanged
    /// store left, which the pass then continues from the last batch its last step wrote.
    /// What killed runs left and this one does not continue is removed, saying why.
    ///
    /// The objects the first step hands over are in no output of its own: how far it got
    /// with them is how far the next step got, whose output records it with each batch.
    /// The first step starts its handed mappings again after the source key of the last
    /// object the next step wrote (see ``resumedPass(_:outputs:)``).
    func outputsAndCheckpointing(
        forFusedPass group: [Int],
        from current: StoreURL,
        in workspace: any MigrationWorkspace
    ) async throws -> [(output: StoreURL, checkpointing: StepCheckpointing?)] {
        let steps = group.map { plan.steps[$0] }
        let fingerprints = MigrationPlan.resumptionFingerprints(fusedPass: steps)
        let abandoned = workspace.abandonedOutputs
        let label =
            "\(group.map { String($0 + 1) }.joined(separator: "+"))/\(plan.steps.count) "
            + steps.map { "\($0.source.name) → \($0.destination.name)" }.joined(separator: ", ")
        /// New outputs, checkpointed from `mark` when there is one.
        func startAgain(_ why: String?, mark: String?) async -> [(output: StoreURL, checkpointing: StepCheckpointing?)] {
            if let why, !abandoned.isEmpty { logger.notice("starting steps \(label) from their first row: \(why)") }
            await workspace.removeAbandoned()
            return group.indices.map { position in
                (
                    workspace.newOutput(forStep: group[position]),
                    mark.map { StepCheckpointing(fingerprint: fingerprints[position], sourceMark: $0, resumeFrom: nil) }
                )
            }
        }
        if let why = MigrationPlan.whyNotResumable(fusedPass: steps, policies: migrator.chain.policies) {
            return await startAgain(why, mark: nil)
        }
        guard let mark = try await workspace.sourceMark(of: current) else {
            return await startAgain("they read what an earlier step of this run wrote", mark: nil)
        }
        var found: [Int: (output: StoreURL, saved: SavedStep)] = [:]
        for candidate in abandoned {
            let saved = try? await workspace.withDatabase(candidate, isDurable: true) { try await StepCheckpointTable(database: $0).read() }
            if let saved, let position = fingerprints.firstIndex(of: saved.fingerprint) { found[position] = (candidate, saved) }
        }
        // The first step's output alone when the second step had not begun its own (killed
        // while the first one wrote its SQL): the second step then starts from its first row.
        guard let upstream = found[0]?.saved else {
            return await startAgain("an interrupted run left outputs, but none of the first step of this pass with a batch in it", mark: mark)
        }
        let downstream = found[1]?.saved
        guard downstream == nil || downstream!.sourceMark == upstream.sourceMark else {
            return await startAgain("an interrupted run left outputs, but of different runs", mark: mark)
        }
        guard upstream.checkpoint.stage != .relationships, downstream?.checkpoint.stage != .relationships else {
            return await startAgain("an interrupted run left outputs, but it was setting relationships one instance at a time", mark: mark)
        }
        guard try await workspace.storeUnchanged(since: upstream.sourceMark) else {
            return await startAgain(
                "an interrupted run left outputs, but the store was written to since (or, on SQLite, the machine restarted)",
                mark: mark
            )
        }
        let resumed: (upstream: SavedStep, handedThrough: [String: Int64])
        do {
            resumed = try resumedPass(group, upstream: upstream, downstream: downstream)
        } catch let refusal as PassNotContinued {
            return await startAgain("an interrupted run left outputs, but \(refusal.reason)", mark: mark)
        }
        var result: [(output: StoreURL, checkpointing: StepCheckpointing?)] = []
        result.append(
            (
                try await workspace.adopt(found[0]!.output, forStep: group[0]),
                StepCheckpointing(
                    fingerprint: fingerprints[0],
                    sourceMark: upstream.sourceMark,
                    resumeFrom: resumed.upstream,
                    handedThrough: resumed.handedThrough
                )
            )
        )
        if let downstream {
            result.append(
                (
                    try await workspace.adopt(found[1]!.output, forStep: group[1]),
                    StepCheckpointing(fingerprint: fingerprints[1], sourceMark: downstream.sourceMark, resumeFrom: downstream)
                )
            )
        }
        await workspace.removeAbandoned()
        if downstream == nil {
            result.append(
                (
                    workspace.newOutput(forStep: group[1]),
                    StepCheckpointing(fingerprint: fingerprints[1], sourceMark: upstream.sourceMark, resumeFrom: nil)
                )
            )
        }
        logResumption(of: "steps \(label)", saved: downstream ?? resumed.upstream)
        return result
    }

    /// Why the outputs of an interrupted fused pass are not continued, though they are the
    /// pass's own and the store is unchanged.
    private struct PassNotContinued: Error {
        let reason: String
    }

    /// What the first step of the interrupted pass `group` continues from: its own
    /// checkpoint, with each handed mapping where the second step's checkpoint says it is
    /// (from its first source when the second step has no output), and, for each handed
    /// mapping, the last source key whose object the second step's output holds.
    ///
    /// The first step goes through its stage 1 again in any case: the mappings it wrote are
    /// skipped, and the second step waits for it to say where its handed objects' keys lie
    /// before reading what it wrote.
    private func resumedPass(
        _ group: [Int],
        upstream saved: SavedStep,
        downstream: SavedStep?
    ) throws -> (upstream: SavedStep, handedThrough: [String: Int64]) {
        guard case .fused(let carried)? = plan.steps[group[0]].fusionWithNext else { throw PassNotContinued(reason: "the steps are not fused") }
        var upstream = saved
        upstream.checkpoint.stage = .instances
        var handedThrough: [String: Int64] = [:]
        for mapping in carried {
            guard let upstreamKeys = upstream.keys[mapping.upstream], upstreamKeys.capacity != nil else {
                throw PassNotContinued(reason: "\(mapping.entityName)'s keys are too large to be tracked one bit each")
            }
            // The second step's association index is rebuilt from its rows in the mapping's
            // range, told apart from another mapping's by their sources, which it never stored.
            if let downstreamKeys = downstream?.keys[mapping.downstream] {
                let sharing = downstream!.keys.filter {
                    $0.key != mapping.downstream && $0.value.destinationRoot == downstreamKeys.destinationRoot
                        && $0.value.offset == downstreamKeys.offset
                }
                guard sharing.isEmpty else {
                    throw PassNotContinued(reason: "\(mapping.downstream) shares its keys with \(sharing.keys.sorted().joined(separator: ", "))")
                }
            }
            let checkpoint = downstream?.checkpoint ?? StepCheckpoint()
            upstream.checkpoint.createdMappings.removeAll { $0 == mapping.upstream }
            if upstream.checkpoint.mapping == mapping.upstream {
                (upstream.checkpoint.mapping, upstream.checkpoint.lastSourceKey, upstream.checkpoint.done) = (nil, 0, 0)
            }
            if checkpoint.createdMappings.contains(mapping.downstream) || checkpoint.stage == .validation {
                upstream.checkpoint.createdMappings.append(mapping.upstream)
                handedThrough[mapping.upstream] = .max
            } else if checkpoint.mapping == mapping.downstream {
                // The handed objects kept the first step's keys plus its offset.
                let last = checkpoint.lastSourceKey - upstreamKeys.offset
                (upstream.checkpoint.mapping, upstream.checkpoint.lastSourceKey, upstream.checkpoint.done) = (mapping.upstream, last, checkpoint.done)
                handedThrough[mapping.upstream] = last
            }
        }
        return (upstream, handedThrough)
    }
}
