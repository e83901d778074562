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
    func outputsAndCheckpointing(forFusedPass group: [Int], from current: StoreURL,
                                 in workspace: any MigrationWorkspace) async throws -> [(output: StoreURL, checkpointing: StepCheckpointing?)] {
        let steps = group.map { plan.steps[$0] }
        let fingerprints = MigrationPlan.resumptionFingerprints(fusedPass: steps)
        let abandoned = workspace.abandonedOutputs
        let label = "\(group.map { String($0 + 1) }.joined(separator: "+"))/\(plan.steps.count) "
            + steps.map { "\($0.source.name) → \($0.destination.name)" }.joined(separator: ", ")
        /// New outputs, checkpointed from `mark` when there is one.
        func startAgain(_ why: String?, mark: String?) async -> [(output: StoreURL, checkpointing: StepCheckpointing?)] {
            if let why, !abandoned.isEmpty { logger.notice("starting steps \(label) from their first row: \(why)") }
            await workspace.removeAbandoned()
            return group.indices.map { position in
                (workspace.newOutput(forStep: group[position]),
                 mark.map { StepCheckpointing(fingerprint: fingerprints[position], sourceMark: $0, resumeFrom: nil) })
            }
        }
        if let why = MigrationPlan.whyNotResumable(fusedPass: steps, policies: migrator.chain.policies) {
            return await startAgain(why, mark: nil)
        }
        guard let mark = try await workspace.sourceMark(of: current) else {
            return await startAgain("they read what an earlier step of this run wrote", mark: nil)
        }
        var found: [Int: (output: StoreURL, saved: SavedStep)] = [:]
        var why: String?
        for candidate in abandoned {
            do {
                let saved = try await workspace.withDatabase(candidate, isDurable: true) { try await StepCheckpointTable(database: $0).read() }
                if let saved, let position = fingerprints.firstIndex(of: saved.fingerprint) { found[position] = (candidate, saved) }
            } catch {
                why = "what it left cannot be read (\(error))"
            }
        }
        guard found.count == group.count else {
            return await startAgain("an interrupted run left outputs, but \(why ?? "not one of each step of this pass with a batch in it")", mark: mark)
        }
        let saved = group.indices.map { found[$0]!.saved }
        guard Set(saved.map(\.sourceMark)).count == 1 else {
            return await startAgain("an interrupted run left outputs, but of different runs", mark: mark)
        }
        guard try await workspace.storeUnchanged(since: saved[0].sourceMark) else {
            return await startAgain("an interrupted run left outputs, but the store was written to since (or, on SQLite, the machine restarted)",
                                    mark: mark)
        }
        let resumed: (upstream: SavedStep, handed: [String: KeyBitSet])
        do {
            resumed = try await resumedPass(group, saved: saved, downstreamOutput: found[1]!.output, in: workspace)
        } catch let refusal as PassNotContinued {
            return await startAgain("an interrupted run left outputs, but \(refusal.reason)", mark: mark)
        }
        var result: [(output: StoreURL, checkpointing: StepCheckpointing?)] = []
        for position in group.indices {
            let output = try await workspace.adopt(found[position]!.output, forStep: group[position])
            result.append((output, StepCheckpointing(
                fingerprint: fingerprints[position], sourceMark: saved[position].sourceMark,
                resumeFrom: position == 0 ? resumed.upstream : saved[position],
                handedIdentities: position == 0 ? resumed.handed : [:])))
        }
        await workspace.removeAbandoned()
        logResumption(of: "steps \(label)", saved: saved[1])
        return result
    }

    /// Why the outputs of an interrupted fused pass are not continued, though they are the
    /// pass's own and the store is unchanged.
    private struct PassNotContinued: Error {
        let reason: String
    }

    /// What the first step of the interrupted pass `group` continues from: its own
    /// checkpoint, with each handed mapping where the next step's output says it is, and
    /// the source keys of the objects that output holds.
    ///
    /// The first step goes through its stage 1 again in any case: the mappings it wrote are
    /// skipped, and the next step waits for it to say where its handed objects' keys lie
    /// before reading what it wrote.
    private func resumedPass(_ group: [Int], saved: [SavedStep], downstreamOutput: StoreURL,
                             in workspace: any MigrationWorkspace) async throws -> (upstream: SavedStep, handed: [String: KeyBitSet]) {
        guard case .fused(let carried)? = plan.steps[group[0]].fusionWithNext else { throw PassNotContinued(reason: "the steps are not fused") }
        var upstream = saved[0]
        let downstream = saved[1].checkpoint
        upstream.checkpoint.stage = .instances
        var handed: [String: KeyBitSet] = [:]
        let destination = plan.steps[group[1]].destination
        for mapping in carried {
            guard let upstreamKeys = upstream.keys[mapping.upstream], let capacity = upstreamKeys.capacity,
                let downstreamKeys = saved[1].keys[mapping.downstream], let downstreamCapacity = downstreamKeys.capacity
            else { throw PassNotContinued(reason: "\(mapping.entityName)'s keys are too large to be tracked one bit each") }
            let sharing = saved[1].keys.filter { $0.key != mapping.downstream && $0.value.destinationRoot == downstreamKeys.destinationRoot
                && $0.value.offset == downstreamKeys.offset }
            guard sharing.isEmpty else { throw PassNotContinued(reason: "\(mapping.downstream) shares its keys with \(sharing.keys.sorted().joined(separator: ", "))") }
            // The next step's rows in the mapping's range: its source keys, which are the
            // first step's source keys plus its offset.
            let keys: [Int64] = try await workspace.withDatabase(downstreamOutput, isDurable: true) { database in
                guard let table = StoreSchema(model: destination, dialect: database.dialect).table(for: downstreamKeys.destinationRoot) else { return [] }
                let rows: SQL = """
                    SELECT \(storeName: "Z_PK") FROM \(identifier: table.name) \
                    WHERE \(storeName: "Z_PK") > \(downstreamKeys.offset) AND \(storeName: "Z_PK") <= \(downstreamKeys.offset + downstreamCapacity)
                    """
                return try await database.read { try $0.rows(literal: rows).compactMap { $0[0].int64 } }
            }
            var bits = KeyBitSet(capacity: capacity)
            for key in keys {
                let source = key - downstreamKeys.offset - upstreamKeys.offset
                if source >= 1, source <= capacity { _ = bits.insert(source) }
            }
            handed[mapping.upstream] = bits
            upstream.checkpoint.createdMappings.removeAll { $0 == mapping.upstream }
            if downstream.createdMappings.contains(mapping.downstream) || downstream.stage == .validation {
                upstream.checkpoint.createdMappings.append(mapping.upstream)
            }
            if downstream.mapping == mapping.downstream {
                upstream.checkpoint.mapping = mapping.upstream
                upstream.checkpoint.lastSourceKey = downstream.lastSourceKey - upstreamKeys.offset
                upstream.checkpoint.done = downstream.done
            } else if upstream.checkpoint.mapping == mapping.upstream {
                upstream.checkpoint.mapping = nil
                upstream.checkpoint.lastSourceKey = 0
                upstream.checkpoint.done = 0
            }
        }
        return (upstream, handed)
    }
}
