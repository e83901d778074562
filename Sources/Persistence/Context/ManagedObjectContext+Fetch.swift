extension ManagedObjectContext {
    /// The objects matching a request, as saved in the store. Objects the context already
    /// has are returned as the same instances, with their unsaved changes kept.
    ///
    /// ```swift
    /// let cheap = try await context.fetch(FetchRequest(entityName: "Book",
    ///     predicate: try Predicate(format: "price < %@", 12.0)))
    /// ```
    public func fetch(_ request: FetchRequest) async throws -> [ManagedObject] {
        let layout = try layout(request.entityName)
        let query = SelectQuery(table: layout.table, schema: store.schema, includesSubentities: request.includesSubentities)
        var compiler = PredicateCompiler(schema: store.schema, entity: layout.entity)
        let condition = try request.predicate.map { try compiler.condition(try $0.substituting(request.substitutionVariables)) }
        var order = try request.sortDescriptors.map { try compiler.sortTerm($0) }
        // The primary key last makes the order total, so pages never overlap.
        order.append("t0.\(store.schema.dialect.name("Z_PK"))")
        let sql = query.sql(join: compiler.joinClause, where: condition, orderBy: order.joined(separator: ", "),
                            limit: request.fetchLimit, offset: request.fetchOffset)
        let arguments = compiler.arguments
        try await store.buildDeferredIndexes()
        let rows = try await store.database.read { try $0.rows(sql, arguments) }
        return try rows.map { try materialize($0, query: query) }
    }

    /// How many objects match a request (limit and offset applied).
    public func count(for request: FetchRequest) async throws -> Int {
        let layout = try layout(request.entityName)
        let query = SelectQuery(table: layout.table, schema: store.schema, includesSubentities: request.includesSubentities)
        var compiler = PredicateCompiler(schema: store.schema, entity: layout.entity)
        let condition = try request.predicate.map { try compiler.condition(try $0.substituting(request.substitutionVariables)) }
        let inner = query.sql(join: compiler.joinClause, where: condition, orderBy: nil, limit: request.fetchLimit, offset: request.fetchOffset)
        let sql = "SELECT count(*) FROM (\(inner)) counted"
        let arguments = compiler.arguments
        try await store.buildDeferredIndexes()
        let count = try await store.database.read { try $0.scalar(sql, arguments) }
        return Int(count?.int64 ?? 0)
    }

    /// Turns a row of a ``SelectQuery`` into the registered object for it.
    func materialize(_ row: Row, query: SelectQuery) throws -> ManagedObject {
        guard let pk = row[0].int64, let entityNumber = row[1].int64,
            let entityName = store.schema.entityNames[Int(entityNumber)]
        else {
            throw StoreError(.database, "a row of \(query.table.name) has no valid Z_PK or Z_ENT", hint: "the store is damaged", store: store.url.description)
        }
        let layout = try layout(entityName)
        let version = row[2].int64 ?? 0
        // The query selects the same columns for every entity of the hierarchy.
        guard let rows = rowLayouts[entityName], query.columnIndex.count == layout.table.allColumns.count else {
            throw StoreError(.database, "a row of \(query.table.name) does not have the columns of \(entityName)", store: store.url.description)
        }
        var values = layout.defaultValues
        for (name, value) in rows.transients { values[name] = value }
        for (name, type, index) in rows.attributes { values[name] = ValueCoding.attributeValue(row[index], type: type) }
        var toOne = layout.noDestinations
        for (name, index, destinationEntity, destinationRoot) in rows.toOne {
            if let destinationPK = row[index].int64 {
                toOne[name] = ObjectID(entityName: destinationEntity, rootEntityName: destinationRoot, key: .permanent(destinationPK))
            }
        }
        let id = ObjectID(entityName: entityName, rootEntityName: layout.table.rootEntityName, key: .permanent(pk))
        return state.withLock { state in
            if let existing = state.registered[id] {
                existing.state.withLock { objectState in
                    // Unsaved changes win over the store, as in Core Data.
                    guard objectState.changedKeys.isEmpty, !objectState.isDeleted else { return }
                    objectState.values = values
                    objectState.toOne = toOne
                    objectState.version = version
                }
                return existing
            }
            let object = ManagedObject(layout: layout, state: .init(
                objectID: id, values: values, toOne: toOne, version: version, isInserted: false, context: self))
            state.registered[id] = object
            return object
        }
    }
}
