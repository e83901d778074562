extension StoreSchema {
    /// Runs `body`, which creates indexes on `connection`; when the rows already break a
    /// uniqueness constraint whose index it creates, throws ``ConstraintConflictError``
    /// naming the constraint, the values and two of the rows that share them, instead of the
    /// engine's bare refusal. A migration that makes two objects alike fails so.
    ///
    /// Runs inside the caller's transaction. On PostgreSQL, where a failed statement leaves the
    /// transaction unable to read until it is rolled back, `body` runs under a savepoint that
    /// the failure rolls back to, so the rows can still be read to name them.
    ///
    /// A row refused on its way in by a unique index that exists already (PostgreSQL names
    /// it) is found the same way: `body` runs once more without that index, which it must
    /// build itself after writing (a set-based step's `INSERT … SELECT` and then its
    /// indexes, under a call of its own so that the rows are still there to name).
    func explainingUniqueIndexes<T>(on connection: any DatabaseConnection, retrying: Bool = true, _ body: () throws -> T) throws -> T {
        let savepoint = dialect.failedStatementAbortsTransaction ? "unique_indexes" : nil
        if let savepoint { try connection.execute("SAVEPOINT \(identifier: savepoint)") }
        do {
            let result = try body()
            if let savepoint { try connection.execute("RELEASE SAVEPOINT \(identifier: savepoint)") }
            return result
        } catch let error as DatabaseError where error.isUniqueViolation {
            if let savepoint { try connection.execute("ROLLBACK TO SAVEPOINT \(identifier: savepoint)") }
            let indexes = rootTables.flatMap { modelIndexes(of: $0) }
            guard let sql = error.sql, sql.hasPrefix("CREATE UNIQUE INDEX") else {
                guard retrying, let savepoint, let index = indexes.first(where: { $0.isUnique && error.message.contains("\"\($0.name)\"") }) else {
                    throw error
                }
                try connection.execute("RELEASE SAVEPOINT \(identifier: savepoint)")
                try connection.execute("DROP INDEX \(identifier: index.name)")
                return try explainingUniqueIndexes(on: connection, retrying: false, body)
            }
            // The name stands before " ON ": the longest match, as one name may start another.
            let named = indexes.filter { sql.contains(" \(dialect.quoteIfNeeded($0.name)) ON ") }
            guard let index = named.max(by: { $0.name.count < $1.name.count }), case .uniqueness(let entity, let properties) = index.purpose,
                let conflict = try? firstConflict(of: index, entity: entity, properties: properties, on: connection)
            else { throw error }
            throw ConstraintConflictError(conflicts: [conflict], index: index.name)
        }
    }

    /// Two rows that share the values of `index`'s constraint, if any.
    private func firstConflict(
        of index: StoreIndex,
        entity: String,
        properties: [String],
        on connection: any DatabaseConnection
    ) throws
        -> ConstraintConflictError.Conflict?
    {
        guard let table = tables[entity] else { return nil }
        var conditions: [SQL] = index.columns.map { "\(identifier: $0) IS NOT NULL" }
        if let numbers = index.entityNumbers { conditions.append("\(storeName: "Z_ENT") IN (\(literals: numbers))") }
        let columns = index.columns.map { "\(identifier: $0)" as SQL }.joined(separator: ", ")
        let sql: SQL = """
            SELECT MIN(\(storeName: "Z_PK")), MAX(\(storeName: "Z_PK")), \(columns) FROM \(identifier: index.table) \
            WHERE \(conditions.joined(separator: " AND ")) GROUP BY \(columns) HAVING COUNT(*) > 1 LIMIT 1
            """
        guard let row = try connection.rows(sql).first, let first = row[0].int64, let second = row[1].int64 else { return nil }
        var values: [ConstraintConflictError.ConstraintValue] = []
        for (offset, property) in properties.enumerated() {
            let stored = row[2 + offset]
            if let attribute = model.entity(named: entity).flatMap({ model.attribute(named: property, of: $0) }) {
                values.append(.attribute(ValueCoding.attributeValue(stored, type: attribute.type)))
            } else if let relationship = model.entity(named: entity).flatMap({ model.relationship(named: property, of: $0) }),
                let key = stored.int64, let destination = tables[relationship.destinationEntityName]
            {
                values.append(
                    .object(
                        ObjectID(entityName: relationship.destinationEntityName, rootEntityName: destination.rootEntityName, key: .permanent(key))
                    )
                )
            }
        }
        func id(_ key: Int64) -> ObjectID { ObjectID(entityName: entity, rootEntityName: table.rootEntityName, key: .permanent(key)) }
        return .init(entity: entity, properties: properties, values: values, objectID: id(second), conflictingObjectID: id(first), isInStore: true)
    }
}
