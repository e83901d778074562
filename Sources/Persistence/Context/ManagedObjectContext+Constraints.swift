extension ManagedObjectContext {
    /// What a save the store refused for a unique index would have broken: the objects of
    /// the save that share a uniqueness constraint's values with another of the save or with
    /// a row in the store. Runs after the refused save was rolled back, so a save that keeps
    /// the constraints pays nothing for it.
    ///
    /// A value that is `nil` never clashes (both engines' unique indexes let `NULL`s be), nor
    /// does a row that the save deletes or changes (its values are the save's).
    func uniquenessConflicts(
        among objects: [ObjectID: ManagedObject],
        deleting deleted: [ObjectID]
    ) async throws -> [ConstraintConflictError.Conflict] {
        let schema = store.schema
        let dialect = schema.dialect
        let indexes = schema.rootTables.flatMap { schema.modelIndexes(of: $0) }
        let ordered = objects.values.sorted { "\($0.objectID)" < "\($1.objectID)" }
        var conflicts: [ConstraintConflictError.Conflict] = []
        // The look-ups in the store, made once the save's own clashes are known.
        var lookups: [(conflict: ConstraintConflictError.Conflict, sql: SQL)] = []
        for index in indexes {
            guard case .uniqueness(let entity, let properties) = index.purpose else { continue }
            var seen: [[ConstraintConflictError.ConstraintValue]: ObjectID] = [:]
            for object in ordered {
                let layout = object.layout
                guard layout.table.name == index.table, index.entityNumbers?.contains(layout.table.entityNumber) ?? true else { continue }
                let (values, toOne, id) = object.state.withLock { ($0.values, $0.toOne, $0.objectID) }
                var key: [ConstraintConflictError.ConstraintValue] = []
                var arguments: [DatabaseValue] = []
                for property in properties {
                    if let attribute = layout.attributes[property] {
                        let value = values[property] ?? .null
                        guard !value.isNull else { break }
                        key.append(.attribute(value))
                        arguments.append(dialect.databaseValue(value, type: attribute.type))
                    } else if let destination = toOne[property] ?? nil {
                        key.append(.object(destination))
                        // A destination new in this save is in no stored row.
                        if let pk = destination.primaryKey { arguments.append(.integer(pk)) }
                    }
                }
                guard key.count == properties.count else { continue }
                if let other = seen[key] {
                    conflicts.append(
                        .init(entity: entity, properties: properties, values: key, objectID: id, conflictingObjectID: other, isInStore: false)
                    )
                    continue
                }
                seen[key] = id
                guard arguments.count == properties.count else { continue }
                var conditions = zip(index.columns, arguments).map { column, value -> SQL in "\(identifier: column) = \(value)" }
                if let numbers = index.entityNumbers {
                    conditions.append("\(storeName: "Z_ENT") IN (\(literals: numbers))")
                }
                let sql: SQL =
                    "SELECT \(storeName: "Z_PK"), \(storeName: "Z_ENT") FROM \(identifier: index.table) WHERE \(conditions.joined(separator: " AND "))"
                let pending = ConstraintConflictError.Conflict(
                    entity: entity,
                    properties: properties,
                    values: key,
                    objectID: id,
                    conflictingObjectID: id,
                    isInStore: true
                )
                lookups.append((pending, sql))
            }
        }
        guard !lookups.isEmpty else { return conflicts }
        // Rows by table and key: keys are unique per table only.
        let excluded = Set((deleted + Array(objects.keys)).compactMap { id in id.primaryKey.map { "\(id.rootEntityName)/\($0)" } })
        let queries = lookups.map { ($0.sql, $0.conflict.objectID.rootEntityName) }
        let found = try await store.database.read { connection in
            try queries.map { lookup in
                try connection.rows(lookup.0).compactMap { row -> (Int64, Int)? in
                    guard let pk = row[0].int64, let number = row[1].int64, !excluded.contains("\(lookup.1)/\(pk)") else { return nil }
                    return (pk, Int(number))
                }.first
            }
        }
        for (lookup, row) in zip(lookups, found) {
            guard let (pk, number) = row, let entityName = schema.entityNames[number], let table = schema.table(for: entityName) else { continue }
            var conflict = lookup.conflict
            conflict.conflictingObjectID = ObjectID(entityName: entityName, rootEntityName: table.rootEntityName, key: .permanent(pk))
            conflicts.append(conflict)
        }
        return conflicts
    }
}

extension DatabaseError {
    /// Whether the engine refused a row for a unique index: SQLite's `SQLITE_CONSTRAINT_UNIQUE`,
    /// PostgreSQL's `unique_violation`.
    var isUniqueViolation: Bool {
        sqlState == "23505" || resultCode == 2067
    }
}
