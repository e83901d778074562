import Foundation

/// Batch access for the migration engine: walk an entity in primary-key order without
/// offsets (so each batch costs the same however far in it is), load objects by key.
extension ManagedObjectContext {
    /// Up to `limit` objects of exactly `entityName` (no sub-entities) whose `Z_PK` is
    /// above `primaryKey`, matching `predicate`, in `Z_PK` order.
    func fetchBatch(entityName: String, predicate: Predicate?, after primaryKey: Int64, limit: Int) async throws -> [ManagedObject] {
        let layout = try layout(entityName)
        let query = SelectQuery(table: layout.table, schema: store.schema, includesSubentities: false)
        var compiler = SQLCompiler(schema: store.schema, entity: layout.entity)
        var conditions: [SQL] = []
        if let predicate { conditions.append(try compiler.condition(predicate)) }
        conditions.append("t0.\(storeName: "Z_PK") > \(primaryKey)")
        // Always filter by Z_ENT: a mapping migrates one entity, never its sub-entities.
        if query.entityFilter() == nil, layout.table.entityNumbers.count > 1 {
            conditions.append("t0.\(storeName: "Z_ENT") = \(literal: layout.table.entityNumber)")
        }
        let sql = query.sql(
            join: compiler.joinClause,
            where: conditions.map { "(\($0))" as SQL }.joined(separator: " AND "),
            orderBy: "t0.\(storeName: "Z_PK")",
            limit: limit,
            offset: 0
        )
        let rows = try await store.database.read { try $0.rows(sql) }
        return try rows.map { try materialize($0, query: query) }
    }

    /// The objects with these primary keys in the table of `rootEntityName`, registered
    /// ones first; keys without a row are left out.
    func objects(rootEntityName: String, primaryKeys: [Int64]) async throws -> [Int64: ManagedObject] {
        let layout = try layout(rootEntityName)
        var result: [Int64: ManagedObject] = [:]
        var missing: [Int64] = []
        for pk in primaryKeys {
            let id = ObjectID(entityName: rootEntityName, rootEntityName: layout.table.rootEntityName, key: .permanent(pk))
            if let object = registeredObject(for: id) { result[pk] = object } else { missing.append(pk) }
        }
        guard !missing.isEmpty else { return result }
        let d = store.schema.dialect
        let query = SelectQuery(table: layout.table, schema: store.schema)
        for chunk in d.statementChunks(missing, limit: 500) {
            let sql = query.sql(where: "t0.\(storeName: "Z_PK") IN (\(list: chunk.map(DatabaseValue.integer)))", orderBy: nil, limit: nil, offset: 0)
            let rows = try await store.database.read { try $0.rows(sql) }
            for row in rows {
                let object = try materialize(row, query: query)
                if let pk = object.objectID.primaryKey { result[pk] = object }
            }
        }
        return result
    }
}

extension ManagedObjectContext {
    /// Loads the saved destinations of the to-many `key` of every object in `objects` with
    /// one query per 500 owners, and keeps them for ``destinations(of:key:)`` until the
    /// next save or reset, as Core Data's relationship prefetching does: a snapshot of the
    /// store, with this context's own changes still applied on top.
    ///
    /// Relationships kept in a join table are not prefetched (each is still read when asked).
    ///
    /// - Returns: every destination loaded.
    @discardableResult
    func prefetchDestinations(of objects: [ManagedObject], key: String) async throws -> [ManagedObject] {
        guard let first = objects.first, let relationship = first.layout.relationships[key], relationship.isToMany,
            case .inverseForeignKey(_, let column)? = store.schema.storage(of: relationship, in: first.entity),
            let inverseName = model.inverse(of: relationship)?.name
        else { return [] }
        let generation = state.withLock { $0.generation }
        let d = store.schema.dialect
        let query = SelectQuery(table: try layout(relationship.destinationEntityName).table, schema: store.schema)
        let order = orderPrefix(relationship.isOrdered ? orderColumn(for: relationship, in: first.entity) : nil, alias: "t0")
        let owners = objects.compactMap { object in object.objectID.primaryKey.map { ($0, object.objectID) } }
        var found: [ObjectID: [ManagedObject]] = Dictionary(uniqueKeysWithValues: owners.map { ($0.1, []) })
        var all: [ManagedObject] = []
        for chunk in d.statementChunks(owners, limit: 500) {
            let keys = chunk.map { DatabaseValue.integer($0.0) }
            let sql = query.sql(
                where: "t0.\(identifier: column) IN (\(list: keys))",
                orderBy: "\(order)t0.\(storeName: "Z_PK")",
                limit: nil,
                offset: 0
            )
            let rows = try await store.database.read { try $0.rows(sql) }
            for row in rows {
                let destination = try materialize(row, query: query)
                all.append(destination)
                if let owner = destination.destinationID(forKey: inverseName), found[owner] != nil { found[owner]?.append(destination) }
            }
        }
        state.withLock { state in
            // A save or reset while the rows were read: they may describe the store before it.
            guard state.generation == generation else { return }
            for (owner, destinations) in found { state.prefetchedToMany[RelationshipKey(owner: owner, key: key)] = destinations }
        }
        return all
    }
}
