/// How a ``ProgressiveMigrator`` has a streamed step record its progress, and continue it
/// where an interrupted run stopped (see ``StepCheckpoint``).
struct StepCheckpointing: Sendable {
    /// Says which step of which chain the output is for; recorded in it when the step begins.
    let fingerprint: String
    /// The store as the step found it; recorded beside the fingerprint.
    let sourceMark: String
    /// What the output an interrupted run left says of itself, when the step continues it.
    let resumeFrom: SavedStep?
    /// In a fused pass, for each entity mapping whose objects this step hands to the next,
    /// the last source key whose object the next step's output holds (`Int64.max`: all of
    /// them). A fused step hands one object over for every source instance, in key order,
    /// and they are in no output of its own: its association index takes their identity
    /// pairs from its source's keys up to there.
    var handedThrough: [String: Int64] = [:]
}

extension MigrationManager {
    /// The association index an interrupted run of the step left: the keys it reserved, as
    /// the output recorded them, with the identity pairs its rows hold and the exceptions
    /// its association table holds.
    func restoreAssociationIndex(_ saved: SavedStep, source: PersistentStore, destination: PersistentStore) async throws -> AssociationIndex {
        let table = AssociationTable(database: destination.database)
        try await table.create()
        // Mappings of different entities of one source hierarchy share a range: their rows
        // in it are told apart by their source entity.
        let ranges = Dictionary(grouping: saved.keys.filter { $0.value.capacity != nil }) { "\($0.value.destinationRoot) \($0.value.offset)" }
        let shared = Set(ranges.values.filter { $0.count > 1 }.flatMap { $0.map(\.key) })
        var keys: [String: AssociationIndex.MappingKeys] = [:]
        for (name, saved) in saved.keys {
            var restored = AssociationIndex.MappingKeys(
                sourceRoot: saved.sourceRoot,
                destinationRoot: saved.destinationRoot,
                offset: saved.offset,
                identities: saved.capacity.map { KeyBitSet(capacity: $0) }
            )
            if let handedThrough = configuration.checkpointing?.handedThrough[name], let capacity = saved.capacity,
                let sourceName = mappingModel.entityMapping(named: name)?.sourceEntityName, let sourceTable = source.schema.table(for: sourceName)
            {
                let handed: SQL = """
                    SELECT \(storeName: "Z_PK") FROM \(identifier: sourceTable.name) \
                    WHERE \(storeName: "Z_ENT") = \(sourceTable.entityNumber) AND \(storeName: "Z_PK") <= \(min(handedThrough, capacity))
                    """
                for key in try await source.database.read({ try $0.rows(handed).compactMap { $0[0].int64 } }) {
                    _ = restored.identities?.insert(key)
                }
            } else if let capacity = saved.capacity, let destinationTable = destination.schema.table(for: saved.destinationRoot) {
                let rows: SQL = """
                    SELECT \(storeName: "Z_PK") FROM \(identifier: destinationTable.name) \
                    WHERE \(storeName: "Z_PK") > \(saved.offset) AND \(storeName: "Z_PK") <= \(saved.offset + capacity)
                    """
                var sources = try await destination.database.read { try $0.rows(rows).compactMap { $0[0].int64 } }.map { $0 - saved.offset }
                if shared.contains(name), let sourceName = mappingModel.entityMapping(named: name)?.sourceEntityName,
                    let sourceTable = source.schema.table(for: sourceName)
                {
                    let own: SQL = """
                        SELECT \(storeName: "Z_PK") FROM \(identifier: sourceTable.name) WHERE \(storeName: "Z_ENT") = \(sourceTable.entityNumber)
                        """
                    let ofEntity = Set(try await source.database.read { try $0.rows(own).compactMap { $0[0].int64 } })
                    sources = sources.filter(ofEntity.contains)
                }
                for key in sources { _ = restored.identities?.insert(key) }
            }
            restored.exceptionCount = try await table.count(mapping: name)
            keys[name] = restored
        }
        return AssociationIndex(table: table, mappings: keys)
    }

    /// Records, with the next write, that the instances of `mapping` are written up to the
    /// source key `last`, `done` of them.
    func checkpointBatch(of mapping: String, last: Int64, done: Int) {
        updateRun { run in
            run.checkpoint?.mapping = mapping
            run.checkpoint?.lastSourceKey = last
            run.checkpoint?.done = done
            run.checkpoint?.batches += 1
        }
    }

    /// Records, with the next write, that every instance of `mapping` is written.
    func checkpointMappingCreated(_ mapping: String) {
        updateRun { run in
            guard run.checkpoint != nil, !run.checkpoint!.createdMappings.contains(mapping) else { return }
            run.checkpoint!.createdMappings.append(mapping)
            run.checkpoint!.mapping = nil
            run.checkpoint!.lastSourceKey = 0
            run.checkpoint!.done = 0
        }
    }

    /// Records, with the next write, that the step is at `stage`.
    func checkpointStage(_ stage: StepCheckpoint.Stage) {
        updateRun { $0.checkpoint?.stage = stage }
    }

    /// The checkpoint to record with the next write, when it is not the one the output
    /// holds; ``checkpointCommitted(_:)`` once that write commits.
    func pendingCheckpoint() -> StepCheckpoint? {
        updateRun { run -> StepCheckpoint? in
            guard let checkpoint = run.checkpoint, checkpoint != run.checkpointWritten else { return nil }
            return checkpoint
        } ?? nil
    }

    /// The output holds `checkpoint` now.
    func checkpointCommitted(_ checkpoint: StepCheckpoint?) {
        guard let checkpoint else { return }
        updateRun { $0.checkpointWritten = checkpoint }
    }
}
