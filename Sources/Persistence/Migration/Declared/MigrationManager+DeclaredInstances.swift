extension MigrationManager {
    /// Stage 1 for a mapping whose hooks declare their values (``DeclaredInsert``): chunk by
    /// chunk from where an interrupted run got to, the source rows' declared values through
    /// the hooks batch by batch, then one transaction that writes the hooks' values to the
    /// work table, inserts the chunk's destinations joining them, empties the table and
    /// records how far the mapping got. Returns the mapping's rows written, and the hooks,
    /// closed: a key used after this is noted, for ``DeclaredHooks/checkUndeclared(after:)``.
    ///
    /// Chunk k + 1 is read and run through the hooks while chunk k is written, where the
    /// hooks read no store (``pipelinesBatches(of:policy:)``): the writer and the hooks use
    /// both cores. The chunks are written one after the other, in key order, each with its
    /// own checkpoint, as without the overlap.
    func declareInstances(
        of mapping: EntityMapping,
        with declared: DeclaredInsert,
        policy: EntityMigrationPolicy,
        access: SourceAccess,
        in run: StagedRun,
        counter: inout ProgressCounter
    ) async throws -> (written: Int, hooks: DeclaredHooks?) {
        var (last, written) = run.resumedPosition(of: mapping) ?? (0, 0)
        counter.advance(.createInstances, .entityMapping(mapping.name), by: written, done: written)
        guard run.associations.keys(of: mapping.name) != nil else { return (written, nil) }
        var offsets: [String: Int64] = [:]
        for entityMapping in mappingModel.entityMappings {
            if let keys = run.associations.keys(of: entityMapping.name) { offsets[entityMapping.name] = keys.offset }
        }
        let destination = run.destination.database
        let number = mappingModel.entityMappings.firstIndex { $0.name == mapping.name } ?? 0
        let work = DeclaredInsert.WorkTable(declared, number: number, dialect: destination.dialect)
        try await destination.writeWithoutTransaction { connection in
            for statement in work.create { try connection.execute(statement) }
        }
        let hooks = DeclaredHooks(declared, mapping: mapping, source: run.source.schema, destination: run.destination.schema)
        let pipelined = pipelinesBatches(of: mapping, policy: policy)
        let clock = partClock
        written = try await withThrowingTaskGroup(of: Int.self) { group in
            // The chunk being written, if one is.
            var writing: (chunk: DeclaredHooks.Chunk, checkpoint: StepCheckpoint?)?
            /// Waits for the chunk being written to commit, and notes it.
            func finishWriting() async throws {
                guard let (chunk, checkpoint) = writing else { return }
                written += try await writingBatch { try await group.next() ?? 0 }
                try chunkCommitted(chunk, checkpoint: checkpoint, of: mapping, written: written, associations: run.associations, counter: &counter)
                try await configuration.throttle?.pace(rows: chunk.sourcesRead)
                writing = nil
            }
            while true {
                try checkCancellation()
                let (chunk, end) = try await readChunk(after: last, through: hooks, policy: policy, from: run.source, dialect: destination.dialect)
                try await finishWriting()
                guard end > last else { return written }
                let insert = declared.statement(joining: work, sourceKeysAfter: last, upTo: end).resolved(
                    sourceSchema: access.schema,
                    offsets: offsets
                )
                checkpointBatch(of: mapping.name, last: end, done: written + chunk.made.count)
                let checkpoint = pendingCheckpoint()
                let rows = chunk.rows
                group.addTask {
                    try await clock.time(.write) {
                        try await destination.write { connection in
                            try connection.insertRows(into: work.name, columns: work.columns, rows: rows)
                            let inserted = try connection.run(insert)
                            try connection.execute(work.clear)
                            if let checkpoint { try StepCheckpointTable.write(checkpoint, on: connection) }
                            return inserted
                        }
                    }
                }
                last = end
                writing = (chunk, checkpoint)
                if !pipelined { try await finishWriting() }
            }
        }
        try await destination.writeWithoutTransaction { try $0.execute(work.drop) }
        hooks.close()
        return (written, hooks)
    }

    /// The next chunk after the source key `last`: its rows read batch by batch and run
    /// through the hooks; returns it with its last source key (`last` when none is left).
    private func readChunk(
        after last: Int64,
        through hooks: DeclaredHooks,
        policy: EntityMigrationPolicy,
        from source: PersistentStore,
        dialect: any SQLDialect
    ) async throws -> (DeclaredHooks.Chunk, end: Int64) {
        let batchSize = max(configuration.batchSize, 1)
        var chunk = DeclaredHooks.Chunk()
        var end = last
        while chunk.sourcesRead < declaredChunkRows {
            let read = hooks.declared.readStatement(after: end, limit: batchSize)
            let rows = try await partClock.time(.read) { try await source.database.read { try $0.rows(read) } }
            guard let lastKey = rows.last?[0].int64 else { break }
            try await partClock.time(.hooks) {
                try await hooks.run(rows, policy: policy, manager: self, into: &chunk, dialect: dialect)
            }
            end = lastKey
            if rows.count < batchSize { break }
        }
        return (chunk, end)
    }

    /// Notes a chunk's committed transaction: its checkpoint, its identity pairs, the
    /// progress and the fault injection's point.
    private func chunkCommitted(
        _ chunk: DeclaredHooks.Chunk,
        checkpoint: StepCheckpoint?,
        of mapping: EntityMapping,
        written: Int,
        associations: AssociationIndex,
        counter: inout ProgressCounter
    ) throws {
        checkpointCommitted(checkpoint)
        associations.claimIdentities(mapping: mapping.name, sources: chunk.made)
        // Sources that got no destination are done too.
        counter.advance(.createInstances, .entityMapping(mapping.name), by: chunk.sourcesRead, done: written)
        try configuration.faultInjection?(.rowsCreated(step: configuration.stepNumber, entityMapping: mapping.name, rows: written))
    }

    /// Source rows per chunk of a mapping with declared values, ten batches: a killed run
    /// loses the chunk being written and the one going through the hooks, so fewer rows than
    /// an SQL mapping's chunk of fifty batches, whose rows cost a third as much.
    private var declaredChunkRows: Int { min(max(configuration.batchSize, 1), 1_000_000) * 10 }
}
