extension MigrationManager {
    /// Stage 1 for a mapping whose hooks declare their values (``DeclaredInsert``): chunk by
    /// chunk from where an interrupted run got to, the source rows' declared values through
    /// the hooks batch by batch, then one transaction that writes the hooks' values to the
    /// work table, inserts the chunk's destinations joining them, empties the table and
    /// records how far the mapping got. Returns the mapping's rows written.
    func declareInstances(
        of mapping: EntityMapping,
        with declared: DeclaredInsert,
        policy: EntityMigrationPolicy,
        access: SourceAccess,
        in run: StagedRun,
        counter: inout ProgressCounter
    ) async throws -> Int {
        var (last, written) = run.resumedPosition(of: mapping) ?? (0, 0)
        counter.advance(.createInstances, .entityMapping(mapping.name), by: written, done: written)
        guard run.associations.keys(of: mapping.name) != nil else { return written }
        var offsets: [String: Int64] = [:]
        for entityMapping in mappingModel.entityMappings {
            if let keys = run.associations.keys(of: entityMapping.name) { offsets[entityMapping.name] = keys.offset }
        }
        let destination = run.destination.database
        let work = DeclaredInsert.WorkTable(declared, dialect: destination.dialect)
        try await destination.writeWithoutTransaction { connection in
            for statement in work.create { try connection.execute(statement) }
        }
        let hooks = DeclaredHooks(declared, mapping: mapping, source: run.source.schema, destination: run.destination.schema)
        let batchSize = max(configuration.batchSize, 1)
        while true {
            try checkDeclaredCancellation()
            var chunk = DeclaredHooks.Chunk()
            var end = last
            while chunk.sourcesRead < declaredChunkRows {
                let read = declared.readStatement(after: end, limit: batchSize)
                let rows = try await partClock.time(.read) { try await run.source.database.read { try $0.rows(read) } }
                guard let lastKey = rows.last?[0].int64 else { break }
                try await partClock.time(.hooks) {
                    try await hooks.run(rows, policy: policy, manager: self, into: &chunk, dialect: destination.dialect)
                }
                end = lastKey
                if rows.count < batchSize { break }
            }
            guard end > last else { break }
            let insert = declared.statement(joining: work, sourceKeysAfter: last, upTo: end).resolved(sourceSchema: access.schema, offsets: offsets)
            checkpointBatch(of: mapping.name, last: end, done: written + chunk.made.count)
            let checkpoint = pendingCheckpoint()
            let rows = chunk.rows
            do {
                written += try await partClock.time(.write) {
                    try await destination.write { connection in
                        try connection.insertRows(into: work.name, columns: work.columns, rows: rows)
                        let inserted = try connection.run(insert)
                        try connection.execute(work.clear)
                        if let checkpoint { try StepCheckpointTable.write(checkpoint, on: connection) }
                        return inserted
                    }
                }
            } catch let error as DatabaseError {
                throw MigrationError(.store, "writing migrated objects failed", entityMapping: mapping.name, underlying: error)
            }
            checkpointCommitted(checkpoint)
            run.associations.claimIdentities(mapping: mapping.name, sources: chunk.made)
            counter.advance(.createInstances, .entityMapping(mapping.name), by: chunk.made.count, done: written)
            last = end
            try configuration.faultInjection?(.rowsCreated(step: configuration.stepNumber, entityMapping: mapping.name, rows: written))
            try await configuration.throttle?.pace(rows: chunk.sourcesRead)
        }
        try await destination.writeWithoutTransaction { try $0.execute(work.drop) }
        return written
    }

    /// Source rows per chunk of a mapping with declared values: what a killed run loses at
    /// most, as for a mapping made in SQL.
    private var declaredChunkRows: Int { min(max(configuration.batchSize, 1), 1_000_000) * 50 }

    private func checkDeclaredCancellation() throws {
        if Task.isCancelled {
            throw MigrationError(.cancelled, "the migration was cancelled", hint: "the source store was not changed; run the migration again")
        }
    }
}
