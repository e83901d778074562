extension ManagedObjectContext {
    /// Sets `object.key` (a to-one) to `destination` and keeps the inverse in step on the
    /// registered objects; the save applies the same rule to rows not loaded.
    func setToOne(_ object: ManagedObject, key: String, destination: ManagedObject?) {
        guard let relationship = object.layout.relationships[key], !relationship.isToMany else {
            noteIssue(
                .init(
                    code: .unknownKey,
                    entity: object.entity.name,
                    objectID: object.objectID,
                    key: key,
                    message: "'\(key)' is not a to-one relationship of \(object.entity.name)"
                )
            )
            return
        }
        let objectID = object.objectID
        let newID = destination?.objectID
        let oldID: ObjectID? = object.state.withLock { state in
            let old = state.toOne[key] ?? nil
            state.toOne.updateValue(newID, forKey: key)
            if old != newID { state.changedKeys.insert(key) }
            return old
        }
        guard oldID != newID else { return }
        noteChanged(object)
        state.withLock { state in
            state.toOneChangeOrder[objectID] = state.nextJoinChange
            state.nextJoinChange += 1
        }

        // One-to-one: both rows hold a foreign key; keep both ends pointing at each other.
        guard let inverse = model.inverse(of: relationship), !inverse.isToMany else { return }
        if let oldID, let old = registeredObject(for: oldID) {
            clear(old, key: inverse.name, ifPointingAt: objectID)
        }
        if let destination {
            let previousPartner: ObjectID? = destination.state.withLock { state in
                let previous = state.toOne[inverse.name] ?? nil
                state.toOne.updateValue(objectID, forKey: inverse.name)
                state.changedKeys.insert(inverse.name)
                return previous
            }
            noteChanged(destination)
            if let previousPartner, previousPartner != objectID, let partner = registeredObject(for: previousPartner) {
                clear(partner, key: key, ifPointingAt: destination.objectID)
            }
        }
    }

    private func clear(_ object: ManagedObject, key: String, ifPointingAt id: ObjectID) {
        let cleared = object.state.withLock { state -> Bool in
            guard state.toOne[key] == id else { return false }
            state.toOne.updateValue(nil, forKey: key)
            state.changedKeys.insert(key)
            return true
        }
        if cleared { noteChanged(object) }
    }

    /// Adds `destination` to (or removes it from) `object.key`, a to-many.
    func changeToMany(_ object: ManagedObject, key: String, destination: ManagedObject, add: Bool) {
        guard let relationship = object.layout.relationships[key], relationship.isToMany else {
            noteIssue(
                .init(
                    code: .unknownKey,
                    entity: object.entity.name,
                    objectID: object.objectID,
                    key: key,
                    message: "'\(key)' is not a to-many relationship of \(object.entity.name)"
                )
            )
            return
        }
        if let inverse = model.inverse(of: relationship), !inverse.isToMany {
            // Stored as the destination's foreign key.
            if add {
                setToOne(destination, key: inverse.name, destination: object)
            } else if destination.destinationID(forKey: inverse.name) == object.objectID {
                setToOne(destination, key: inverse.name, destination: nil)
            }
            return
        }
        let storage = store.schema.storage(of: relationship, in: object.entity)
        guard
            let link = ToManyLink(
                storage,
                orderColumn: store.schema.orderColumn(of: relationship, in: object.entity),
                sourceEntity: object.entity.name,
                relationship: relationship.name
            )
        else { return }
        // A join row is named from the table's owning side; a hidden key from the relationship's.
        let fromSource = if case .joinTable(_, let fromSource)? = storage { fromSource } else { true }
        let change =
            fromSource
            ? JoinChange(link: link, source: object.objectID, destination: destination.objectID)
            : JoinChange(link: link, source: destination.objectID, destination: object.objectID)
        state.withLock { state in
            state.joinChanges[change] = add
            state.joinChangeOrder[change] = state.nextJoinChange
            state.nextJoinChange += 1
        }
        object.state.withLock { _ = $0.changedKeys.insert(key) }
        noteChanged(object)
        if let inverse = relationship.inverseName {
            destination.state.withLock { _ = $0.changedKeys.insert(inverse) }
            noteChanged(destination)
        }
    }

    /// The object with this ID: the registered one, or the row loaded from the store.
    ///
    /// - Throws: ``StoreError/Code/objectNotFound`` when the row does not exist.
    public func existingObject(with id: ObjectID) async throws -> ManagedObject {
        if let object = registeredObject(for: id) { return object }
        guard let pk = id.primaryKey else {
            throw StoreError(.objectNotFound, "the object \(id) was never saved and is not in this context")
        }
        let layout = try layout(id.rootEntityName)
        let query = SelectQuery(table: layout.table, schema: store.schema)
        let sql = query.sql(where: "t0.\(storeName: "Z_PK") = \(pk)", orderBy: nil, limit: nil, offset: 0)
        let rows = try await store.database.read { try $0.rows(sql) }
        guard let row = rows.first else {
            throw StoreError(.objectNotFound, "there is no \(id.entityName) with primary key \(pk) in the store", store: store.url.description)
        }
        return try materialize(row, query: query)
    }

    /// The objects with these IDs, in their order, with one query per 500 of a table:
    /// the registered ones as they are, the others loaded from the store. Unlike
    /// ``existingObject(with:)`` it does not throw for a row that no longer exists (deleted
    /// since its ID was fetched): that object is left out.
    ///
    /// ```swift
    /// let ids = try await context.fetchObjectIDs(FetchRequest(entityName: "Book", fetchLimit: 100))
    /// let firstTen = try await context.existingObjects(with: Array(ids.prefix(10)))
    /// ```
    public func existingObjects(with ids: [ObjectID]) async throws -> [ManagedObject] {
        var loaded: [String: [Int64: ManagedObject]] = [:]
        for (rootEntityName, ofRoot) in Dictionary(grouping: ids, by: \.rootEntityName) {
            loaded[rootEntityName] = try await objects(rootEntityName: rootEntityName, primaryKeys: ofRoot.compactMap(\.primaryKey))
        }
        // By table and key: an ID taken before its object was saved finds the saved row.
        return ids.compactMap { id in
            guard let primaryKey = id.primaryKey else { return registeredObject(for: id) }
            return loaded[id.rootEntityName]?[primaryKey]
        }
    }

    /// The destinations of a to-many relationship: the saved ones, adjusted by unsaved
    /// changes, in the order last set where one was (``ManagedObject/setDestinations(_:forKey:)``).
    func destinations(of object: ManagedObject, key: String) async throws -> [ManagedObject] {
        guard let relationship = object.layout.relationships[key], relationship.isToMany else {
            throw ContextError("'\(key)' is not a to-many relationship of \(object.entity.name)")
        }
        let destinations = try await withUnsavedChanges(relationship, of: object)
        return relationship.isOrdered ? withPendingOrder(destinations, of: object, key: key) : destinations
    }

    private func withUnsavedChanges(_ relationship: RelationshipDescription, of object: ManagedObject) async throws -> [ManagedObject] {
        let key = relationship.name
        // The objects of a save in flight are forgotten and not in the store yet: the answer
        // would miss them, so it is refused rather than given short.
        if !object.isInserted, state.withLock({ $0.savesInFlight > 0 }) {
            throw ContextError(
                "'\(key)' of \(object.entity.name) was read while a migration batch is written: the store does not hold that batch yet, so its objects would be missing; a policy or migration manager that reads to-many relationships of objects earlier batches made must not say `fetchesFromStores` is false"
            )
        }
        let schema = store.schema
        let objectID = object.objectID
        let destinationLayout = try layout(relationship.destinationEntityName)
        let query = SelectQuery(table: destinationLayout.table, schema: schema)

        switch schema.storage(of: relationship, in: object.entity) {
        case .inverseForeignKey(_, let column)?:
            let inverseName = model.inverse(of: relationship)!.name
            var saved: [ManagedObject] = []
            if let prefetched = state.withLock({ $0.prefetchedToMany[RelationshipKey(owner: objectID, key: key)] }) {
                saved = prefetched
            } else if let pk = objectID.primaryKey {
                let order = orderPrefix(relationship.isOrdered ? orderColumn(for: relationship, in: object.entity) : nil, alias: "t0")
                saved = try await savedRows(
                    query.sql(where: "t0.\(identifier: column) = \(pk)", orderBy: "\(order)t0.\(storeName: "Z_PK")", limit: nil, offset: 0),
                    query: query
                )
            }
            // What the context changed since: objects moved away, objects added.
            var result = saved.filter { !$0.isDeleted && $0.destinationID(forKey: inverseName) == objectID }
            let known = Set(result.map(ObjectIdentifier.init))
            let added = state.withLock { state in
                (state.inserted + Array(state.updated)).compactMap { state.registered[$0] }
            }.filter { candidate in
                !known.contains(ObjectIdentifier(candidate)) && candidate.layout.relationships[inverseName] != nil
                    && candidate.destinationID(forKey: inverseName) == objectID && !candidate.isDeleted
                    && model.entity(candidate.entity, isKindOf: destinationLayout.entity)
            }
            result.append(contentsOf: added)
            return result

        case .joinTable(let table, let fromSource)?:
            let mine = fromSource ? table.sourceColumn : table.destinationColumn
            let theirs = fromSource ? table.destinationColumn : table.sourceColumn
            var saved: [ManagedObject] = []
            if let pk = objectID.primaryKey {
                let order = orderPrefix(table.orderColumn(fromSource: fromSource), alias: "j")
                saved = try await savedRows(
                    query.sql(
                        join: "JOIN \(identifier: table.name) j ON j.\(identifier: theirs) = t0.\(storeName: "Z_PK")",
                        where: "j.\(identifier: mine) = \(pk)",
                        orderBy: "\(order)t0.\(storeName: "Z_PK")",
                        limit: nil,
                        offset: 0
                    ),
                    query: query
                )
            }
            return withPendingChanges(to: saved, of: objectID, link: .join(table), fromSource: fromSource)

        case .hiddenForeignKey(_, let column)?:
            let order = schema.orderColumn(of: relationship, in: object.entity)
            var saved: [ManagedObject] = []
            if let pk = objectID.primaryKey {
                saved = try await savedRows(
                    query.sql(
                        where: "t0.\(identifier: column) = \(pk)",
                        orderBy: "\(orderPrefix(order, alias: "t0"))t0.\(storeName: "Z_PK")",
                        limit: nil,
                        offset: 0
                    ),
                    query: query
                )
            }
            let link = ToManyLink.hiddenKey(
                .init(
                    table: destinationLayout.table.name,
                    column: column,
                    orderColumn: order,
                    sourceEntity: object.entity.name,
                    relationship: relationship.name
                )
            )
            return withPendingChanges(to: saved, of: objectID, link: link, fromSource: true)

        default:
            throw ContextError("'\(key)' of \(object.entity.name) is not stored")
        }
    }

    /// The objects of the rows `sql` selects (a ``SelectQuery`` on a destination's table),
    /// once any deferred indexes it may look rows up by exist.
    private func savedRows(_ sql: SQL, query: SelectQuery) async throws -> [ManagedObject] {
        try await store.buildDeferredIndexes()
        let rows = try await store.database.read { try $0.rows(sql) }
        return try rows.map { try materialize($0, query: query) }
    }

    func orderColumn(for relationship: RelationshipDescription, in entity: EntityDescription) -> String? {
        store.schema.orderColumn(of: relationship, in: entity)
    }

    /// `alias.column, ` to order an ordered relationship's rows by, keys without an order
    /// first (as SQLite sorts NULL): earlier releases wrote none, and rows added since get
    /// keys after them.
    func orderPrefix(_ column: String?, alias: String) -> SQL {
        guard let column else { return "" }
        return "\(identifier: alias).\(identifier: column)\(raw: store.schema.dialect.nullOrdering(ascending: true)), "
    }

    /// The saved destinations of one object's to-many kept in a join table or hidden key,
    /// with this context's unsaved changes of it applied: pairs removed left out, pairs
    /// added put at the end. A destination a hidden key moves to another source leaves.
    private func withPendingChanges(to saved: [ManagedObject], of objectID: ObjectID, link: ToManyLink, fromSource: Bool) -> [ManagedObject] {
        let (changes, order) = state.withLock { ($0.joinChanges.filter { $0.key.link == link }, $0.joinChangeOrder) }
        var movedAway = Set<ObjectID>()
        if case .hiddenKey = link {
            for (change, added) in changes where added && change.source != objectID { movedAway.insert(change.destination) }
        }
        var result: [ManagedObject] = []
        for candidate in saved where !candidate.isDeleted && !movedAway.contains(candidate.objectID) {
            let change =
                fromSource
                ? JoinChange(link: link, source: objectID, destination: candidate.objectID)
                : JoinChange(link: link, source: candidate.objectID, destination: objectID)
            if changes[change] != false { result.append(candidate) }
        }
        let present = Set(result.map(\.objectID))
        for (change, added) in changes.sorted(by: { order[$0.key] ?? 0 < order[$1.key] ?? 0 }) where added {
            let other = fromSource ? (change.source == objectID ? change.destination : nil) : (change.destination == objectID ? change.source : nil)
            if let other, !present.contains(other), let candidate = registeredObject(for: other), !candidate.isDeleted {
                result.append(candidate)
            }
        }
        return result
    }
}
