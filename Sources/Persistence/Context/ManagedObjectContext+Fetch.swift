extension ManagedObjectContext {
    /// The objects matching a request. Objects the context already has are returned as the
    /// same instances, with their unsaved changes kept; as in Core Data, the context's
    /// unsaved changes count (``FetchRequest/includesPendingChanges``): inserted objects
    /// that match are included, changed ones are matched on their current values, deleted
    /// ones are left out.
    ///
    /// ```swift
    /// let cheap = try await context.fetch(FetchRequest(entityName: "Book",
    ///     predicate: try Predicate(format: "price < %@", 12.0)))
    /// ```
    public func fetch(_ request: FetchRequest) async throws -> [ManagedObject] {
        let layout = try layout(request.entityName)
        let predicate = try request.predicate.map { try $0.substituting(request.substitutionVariables) }
        let pending = request.includesPendingChanges ? pendingChanges(for: layout, includesSubentities: request.includesSubentities) : nil
        var (limit, offset) = (request.fetchLimit, request.fetchOffset)
        if let pending {
            // The window is cut after the unsaved changes are merged in; the store is asked for
            // enough rows that those whose saved values are stale can be left out.
            (limit, offset) = (request.fetchLimit.map { $0 + request.fetchOffset + pending.stale.count }, 0)
        }
        let (query, rows) = try await storedRows(request, layout, predicate, limit: limit, offset: offset, selecting: .objects)
        let stored = try rows.map { try materialize($0, query: query) }
        guard let pending else { return stored }
        return try await merge(stored, with: pending, predicate: predicate, request: request)
    }

    /// The IDs of the objects matching a request, in its order and window: Core Data's
    /// `managedObjectIDResultType`. Only the keys of the rows are read, so a window of rows
    /// with long texts costs no more than one of short ones; load the objects in batches of
    /// your choosing with ``existingObjects(with:)``. (When this context has unsaved changes
    /// of the entity, they are matched as ``fetch(_:)`` matches them, on the objects.)
    ///
    /// ```swift
    /// let ids = try await context.fetchObjectIDs(FetchRequest(entityName: "Page", fetchLimit: 100))
    /// for start in stride(from: 0, to: ids.count, by: 10) {
    ///     let pages = try await container.newContext().existingObjects(with: Array(ids[start..<min(start + 10, ids.count)]))
    /// }
    /// ```
    public func fetchObjectIDs(_ request: FetchRequest) async throws -> [ObjectID] {
        let layout = try layout(request.entityName)
        if request.includesPendingChanges, pendingChanges(for: layout, includesSubentities: request.includesSubentities) != nil {
            // Unsaved changes are matched on the objects' current values, which the objects hold.
            return try await fetch(request).map(\.objectID)
        }
        let predicate = try request.predicate.map { try $0.substituting(request.substitutionVariables) }
        let (query, rows) = try await storedRows(
            request,
            layout,
            predicate,
            limit: request.fetchLimit,
            offset: request.fetchOffset,
            selecting: .objectIDs
        )
        return try rows.map { row in
            let (primaryKey, layout) = try identity(of: row, query: query)
            return ObjectID(entityName: layout.entity.name, rootEntityName: layout.table.rootEntityName, key: .permanent(primaryKey))
        }
    }

    /// The saved rows matching a request's predicate and order in a window.
    /// A `compiler` given has compiled the selection's columns, and holds the joins they need.
    func storedRows(
        _ request: FetchRequest,
        _ layout: EntityLayout,
        _ predicate: Predicate?,
        limit: Int?,
        offset: Int,
        selecting selection: SelectQuery.Selection,
        compiler: SQLCompiler? = nil
    ) async throws -> (SelectQuery, [Row]) {
        let (query, sql) = try storedRowsSQL(request, layout, predicate, limit: limit, offset: offset, selecting: selection, compiler: compiler)
        try await store.buildDeferredIndexes()
        return (query, try await store.database.read { try $0.rows(sql) })
    }

    /// The `SELECT` of ``storedRows(_:_:_:limit:offset:selecting:compiler:)``.
    func storedRowsSQL(
        _ request: FetchRequest,
        _ layout: EntityLayout,
        _ predicate: Predicate?,
        limit: Int?,
        offset: Int,
        selecting selection: SelectQuery.Selection,
        compiler: SQLCompiler? = nil
    ) throws -> (SelectQuery, SQL) {
        let query = SelectQuery(table: layout.table, schema: store.schema, includesSubentities: request.includesSubentities)
        var compiler = compiler ?? SQLCompiler(schema: store.schema, entity: layout.entity)
        let condition = try predicate.map { try compiler.condition($0) }
        var order = try request.sortDescriptors.map { try compiler.sortTerm($0) }
        // The primary key last makes the order total, so pages never overlap.
        order.append("t0.\(storeName: "Z_PK")")
        return (
            query,
            query.sql(
                selecting: selection,
                join: compiler.joinClause,
                where: condition,
                orderBy: order.joined(separator: ", "),
                limit: limit,
                offset: offset
            )
        )
    }

    /// How many objects match a request (limit and offset applied), unsaved changes
    /// counted as ``fetch(_:)`` counts them.
    public func count(for request: FetchRequest) async throws -> Int {
        let layout = try layout(request.entityName)
        let predicate = try request.predicate.map { try $0.substituting(request.substitutionVariables) }
        guard request.includesPendingChanges, let pending = pendingChanges(for: layout, includesSubentities: request.includesSubentities) else {
            return try await storeCount(
                layout,
                predicate,
                includesSubentities: request.includesSubentities,
                limit: request.fetchLimit,
                offset: request.fetchOffset
            )
        }
        var total = try await storeCount(layout, predicate, includesSubentities: request.includesSubentities)
        // Rows whose saved values no longer tell are counted on their objects instead.
        let stale = pending.stale.compactMap(\.primaryKey)
        for keys in store.schema.dialect.statementChunks(stale, limit: 500).map(Array.init) {
            total -= try await storeCount(layout, predicate, includesSubentities: request.includesSubentities, among: keys)
        }
        total += try await unsavedMatches(pending, predicate: predicate).count
        return min(max(total - request.fetchOffset, 0), request.fetchLimit ?? .max)
    }

    /// The number of saved rows matching `predicate`, in a window, or among some primary keys.
    private func storeCount(
        _ layout: EntityLayout,
        _ predicate: Predicate?,
        includesSubentities: Bool,
        limit: Int? = nil,
        offset: Int = 0,
        among keys: [Int64]? = nil
    ) async throws -> Int {
        let query = SelectQuery(table: layout.table, schema: store.schema, includesSubentities: includesSubentities)
        var compiler = SQLCompiler(schema: store.schema, entity: layout.entity)
        var conditions = try predicate.map { [try compiler.condition($0)] } ?? []
        if let keys { conditions.append("t0.\(storeName: "Z_PK") IN (\(list: keys.map(DatabaseValue.integer)))") }
        let condition: SQL? = conditions.isEmpty ? nil : conditions.map { "(\($0))" as SQL }.joined(separator: " AND ")
        let inner = query.sql(join: compiler.joinClause, where: condition, orderBy: nil, limit: limit, offset: offset)
        let sql: SQL = "SELECT count(*) FROM (\(inner)) counted"
        try await store.buildDeferredIndexes()
        let count = try await store.database.read { try $0.scalar(sql) }
        return Int(count?.int64 ?? 0)
    }

    /// Turns a row of a ``SelectQuery`` into the registered object for it.
    func materialize(_ row: Row, query: SelectQuery) throws -> ManagedObject {
        let (pk, layout) = try identity(of: row, query: query)
        let entityName = layout.entity.name
        let version = row[2].int64 ?? 0
        // The query selects the same columns for every entity of the hierarchy.
        guard let rows = rowLayouts[entityName], query.columnIndex.count == layout.table.allColumns.count else {
            throw StoreError(.database, "a row of \(query.table.name) does not have the columns of \(entityName)", store: store.url.description)
        }
        var values = layout.defaultValues
        for (slot, type, index) in rows.attributes { values.values[slot] = ValueCoding.attributeValue(row[index], type: type) }
        if let external = store.externalBinaryStorage, !layout.externallyStoredSlots.isEmpty {
            for (slot, _, index) in rows.attributes where layout.externallyStoredSlots.contains(slot) {
                values.values[slot] = try external.value(of: row[index], store: store.url)
            }
        }
        var toOne = layout.noDestinations
        for (slot, index, destinationEntity, destinationRoot) in rows.toOne {
            if let destinationPK = row[index].int64 {
                toOne.values[slot] = ObjectID(entityName: destinationEntity, rootEntityName: destinationRoot, key: .permanent(destinationPK))
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
            let object = ManagedObject(
                layout: layout,
                state: .init(
                    objectID: id,
                    values: values,
                    toOne: toOne,
                    version: version,
                    isInserted: false,
                    context: self
                )
            )
            state.registered[id] = object
            return object
        }
    }

    /// The primary key and entity of a row whose first two columns are `Z_PK` and `Z_ENT`.
    func identity(of row: Row, query: SelectQuery) throws -> (Int64, EntityLayout) {
        guard let pk = row[0].int64, let entityNumber = row[1].int64,
            let entityName = store.schema.entityNames[Int(entityNumber)]
        else {
            throw StoreError(
                .database,
                "a row of \(query.table.name) has no valid Z_PK or Z_ENT",
                hint: "the store is damaged",
                store: store.url.description
            )
        }
        return (pk, try layout(entityName))
    }
}
