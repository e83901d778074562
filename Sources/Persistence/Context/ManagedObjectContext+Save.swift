import Foundation
import Logging

extension ManagedObjectContext {
    /// Validates and writes every change in one transaction: all of it or none of it.
    ///
    /// Applies delete rules, keeps inverses, bumps `Z_OPT` and `Z_PRIMARYKEY`.
    ///
    /// - Throws: ``ValidationError`` listing every invalid object and key,
    ///   ``ConstraintConflictError`` when two objects would share the values of a uniqueness
    ///   constraint, or ``StoreError`` (``StoreError/Code/conflict`` when another context changed a row
    ///   since it was read). On any error the store and the context are as they were.
    public func save() async throws {
        try await save(validating: true)
    }

    /// Saves without model validation: the migration engine writes destination objects in
    /// batches before their relationships exist, and validates in its own stage.
    ///
    /// `assignedKeys` gives inserted objects the keys a migration chose; with `insertsInBulk`
    /// they are written a statement per entity (see ``SavePlan/insertsInBulk``).
    /// `alsoWriting` runs in the save's transaction once the objects are written, with the
    /// key of each object saved (the migration's association rows and checkpoint, which
    /// must not outlive or miss the batch they describe).
    ///
    /// `registeringSaved: false` leaves inserted objects registered under their temporary
    /// IDs (each still learns its permanent one): only for a caller that calls
    /// ``forgetObjectsNotHeldElsewhere()`` before it uses the context again, which registers
    /// what it keeps under the objects' new IDs. A migration batch is forgotten so, and
    /// registering each of its objects a second time, only to forget it, was wasted.
    func save(
        validating: Bool,
        assignedKeys: [ObjectID: Int64] = [:],
        insertsInBulk: Bool = false,
        registeringSaved: Bool = true,
        alsoWriting: AlsoWriting? = nil
    ) async throws {
        var (planned, objects) = try makePlan(validating: validating)
        planned.assignedKeys = assignedKeys
        planned.insertsInBulk = insertsInBulk
        planned.checksDestinations = validating
        let plan = planned
        let started = ContinuousClock.now
        let result: SaveResult
        do {
            result = try await write(plan, alsoWriting: alsoWriting)
        } catch let error as DatabaseError {
            if error.isUniqueViolation, let conflicts = try? await uniquenessConflicts(among: objects, deleting: plan.deletes), !conflicts.isEmpty {
                throw ConstraintConflictError(conflicts: conflicts)
            }
            throw StoreError(.database, "the save failed and was rolled back", store: store.url.description, underlying: error)
        }
        // Nothing of the objects was written (what goes with them may have been).
        guard !plan.isEmpty else { return }
        settle(marking: SavedMarks(plan), adopting: Adoption(result, registeringSaved: registeringSaved))
        logSaved(plan, result: result, since: started)
    }

    /// What a migration writes in a save's transaction once the objects are written, given
    /// the key of each object saved.
    typealias AlsoWriting = @Sendable (any DatabaseConnection, _ keyOf: (ObjectID) -> Int64?) throws -> Void

    /// Writes `plan` and `alsoWriting` in one transaction on the store's writer; touches
    /// no object of the context, so it may run while the context is used for what follows.
    func write(_ plan: SavePlan, alsoWriting: AlsoWriting?) async throws -> SaveResult {
        if plan.isEmpty, alsoWriting == nil { return SaveResult() }
        let schema = store.schema
        let model = store.model
        return try await store.database.write { connection in
            guard !plan.isEmpty else {
                try alsoWriting?(connection) { $0.primaryKey }
                return SaveResult()
            }
            var executor = SaveExecutor(connection: connection, schema: schema, model: model)
            let result = try executor.run(plan)
            try alsoWriting?(connection) { id in id.primaryKey ?? result.primaryKeys[id] }
            return result
        }
    }

    func logSaved(_ plan: SavePlan, result: SaveResult, since started: ContinuousClock.Instant) {
        logger.debug(
            "saved",
            metadata: [
                LoggingKeys.store: "\(store.url)",
                LoggingKeys.rows: "\(plan.inserts.count + plan.updates.count + result.deleted.count)",
                LoggingKeys.durationMilliseconds: "\(Self.milliseconds(since: started))",
            ]
        )
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = (ContinuousClock.now - start).components
        return elapsed.seconds * 1_000 + elapsed.attoseconds / 1_000_000_000_000_000
    }

    /// Checks the objects and copies their changes out.
    func makePlan(validating: Bool) throws -> (SavePlan, [ObjectID: ManagedObject]) {
        let (inserted, updated, deleted, joinChanges, joinChangeOrder, toOneChangeOrder, pending) = state.withLock { state in
            (
                state.inserted.compactMap { state.registered[$0] },
                // The save puts them in the order their to-ones were set where that counts
                // (`toOneChangeOrder`, for the order keys of ordered to-manys).
                state.updated.compactMap { state.registered[$0] },
                Array(state.deleted.keys),
                state.joinChanges,
                state.joinChangeOrder,
                state.toOneChangeOrder,
                state.pendingIssues
            )
        }
        var issues = pending
        for object in inserted + updated where validating {
            issues += Self.validate(object)
        }
        guard issues.isEmpty else { throw ValidationError(issues: issues) }

        var plan = SavePlan()
        var objects: [ObjectID: ManagedObject] = [:]
        objects.reserveCapacity(inserted.count + updated.count)
        let dialect = store.schema.dialect
        // Values the engine cannot hold, named by attribute. A migration's unvalidated batches
        // are not scanned twice: the connection refuses such a value too, naming its column.
        var unstorable: [ValidationError.Issue] = []
        for (object, isInsert) in inserted.map({ ($0, true) }) + updated.map({ ($0, false) }) {
            let layout = object.layout
            let snapshot = object.state.withLock { $0 }
            objects[snapshot.objectID] = object
            // An insert writes every column; an update the changed ones.
            let keys = isInsert ? nil : snapshot.changedKeys
            var values: [(column: String, value: DatabaseValue)] = []
            values.reserveCapacity(layout.attributeColumns.count)
            for (attribute, column, type, slot) in layout.attributeColumns where keys?.contains(attribute) ?? true {
                var value = dialect.databaseValue(snapshot.values.values[slot], type: type)
                if let external = store.externalBinaryStorage, layout.externallyStoredSlots.contains(slot) { value = external.cell(for: value) }
                if validating, !dialect.textHoldsNUL, case .text(let text) = value, text.utf8.contains(0) {
                    unstorable.append(
                        .init(
                            code: .unstorableCharacter,
                            entity: layout.entity.name,
                            objectID: snapshot.objectID,
                            key: attribute,
                            message: "\(attribute) holds a NUL character (U+0000), which PostgreSQL text cannot store"
                        )
                    )
                }
                values.append((column, value))
            }
            var foreignKeys: [(column: String, relationship: String, destination: ObjectID?)] = []
            for (relationship, column, slot) in layout.foreignKeyColumns where keys?.contains(relationship) ?? true {
                foreignKeys.append((column, relationship, snapshot.toOne.values[slot]))
            }
            // Beside a key, where the store keeps one, the entity of the row it points at.
            for (relationship, column, slot) in layout.entityTypeColumns where keys?.contains(relationship) ?? true {
                let number = snapshot.toOne.values[slot].flatMap { store.schema.table(for: $0.entityName)?.entityNumber }
                values.append((column, number.map { .integer(Int64($0)) } ?? .null))
            }
            let write = SavePlan.RowWrite(
                id: snapshot.objectID,
                entityName: layout.entity.name,
                values: values,
                foreignKeys: foreignKeys,
                expectedVersion: snapshot.version
            )
            if isInsert { plan.inserts.append(write) } else if !values.isEmpty || !foreignKeys.isEmpty { plan.updates.append(write) }
            for relationship in layout.relationships.values
            where relationship.isToMany && !relationship.isTransient
                && (relationship.minCount > 0 || relationship.maxCount > 0 || !relationship.isOptional)
            {
                plan.countChecks.append(.init(id: snapshot.objectID, entityName: layout.entity.name, relationship: relationship.name))
            }
            // A to-one whose inverse is a limited to-many changes the count at the destination,
            // which may not be loaded or changed itself (Shelf.books from Book.shelf).
            for foreignKey in foreignKeys {
                guard let destination = foreignKey.destination, let relationship = layout.relationships[foreignKey.relationship],
                    let inverse = model.inverse(of: relationship), inverse.isToMany,
                    inverse.minCount > 0 || inverse.maxCount > 0 || !inverse.isOptional
                else { continue }
                plan.countChecks.append(.init(id: destination, entityName: relationship.destinationEntityName, relationship: inverse.name))
            }
        }
        guard unstorable.isEmpty else { throw ValidationError(issues: unstorable) }
        plan.deletes = deleted
        plan.joinChanges = joinChanges.map { ($0.key, $0.value) }.sorted { joinChangeOrder[$0.change] ?? 0 < joinChangeOrder[$1.change] ?? 0 }
        plan.reorders = pendingReorders()
        plan.toOneChangeOrder = toOneChangeOrder
        // A changed join row also changes the objects at both ends, whose counts may now be off.
        for (change, _) in plan.joinChanges {
            for (id, relationship) in [(change.source, change.link.relationship), (change.destination, change.link.inverseRelationship)] {
                guard let relationship, let object = registeredObject(for: id), !object.isDeleted,
                    let description = object.layout.relationships[relationship],
                    description.minCount > 0 || description.maxCount > 0 || !description.isOptional
                else { continue }
                plan.countChecks.append(.init(id: id, entityName: object.entity.name, relationship: relationship))
            }
        }
        if !validating { plan.countChecks = [] }
        return (plan, objects)
    }

    /// Counts the plan's objects as saved: inserted ones are inserted no more, those whose
    /// row the save updates are one version further (as its `Z_OPT`; a change of an
    /// object's many-to-many rows alone leaves its row as it was), and no change is
    /// pending. Needs nothing of the write's result, so a save in flight
    /// (``beginSave(assignedKeys:insertsInBulk:)``) does it before its rows are written:
    /// what changes meanwhile is a change after the save.
    func markSaved(_ plan: SavePlan) {
        settle(marking: SavedMarks(plan), adopting: nil)
    }

    /// Brings the registered objects in line with what the save wrote: the keys inserted
    /// rows were given, the rows deleted (by cascade rules too).
    ///
    /// Changes made while a save was in flight (``beginSave(assignedKeys:insertsInBulk:)``)
    /// may name its objects by their temporary IDs: they are named by the permanent ones
    /// from now on, as the objects are when `registeringSaved`.
    func adopt(_ result: SaveResult, registeringSaved: Bool) {
        settle(marking: nil, adopting: Adoption(result, registeringSaved: registeringSaved))
    }

    /// ``markSaved(_:)`` and then ``adopt(_:registeringSaved:)`` in one walk over the
    /// registered objects, as an ordinary save does once its write is in.
    private func settle(marking marks: SavedMarks?, adopting adoption: Adoption?) {
        state.withLock { state in
            if let marks { marks.clearPending(in: &state) }
            if let adoption { adoption.register(in: &state) }
            let adopts = adoption.map { !$0.isEmpty } ?? false
            guard marks != nil || adopts else { return }
            for object in state.registered.values {
                object.state.withLock { objectState in
                    // Marked first: the plan names inserted objects by their temporary IDs.
                    marks?.mark(&objectState)
                    if adopts { adoption?.adopt(&objectState) }
                }
            }
        }
    }

    /// What a save does to its objects whatever its write gives back (``markSaved(_:)``).
    private struct SavedMarks {
        let inserted: Set<ObjectID>
        let updated: Set<ObjectID>

        init(_ plan: SavePlan) {
            inserted = Set(plan.inserts.lazy.map(\.id))
            updated = Set(plan.updates.lazy.map(\.id))
        }

        func mark(_ objectState: inout ManagedObject.State) {
            if inserted.contains(objectState.objectID) {
                objectState.isInserted = false
                objectState.version = 1
            } else if updated.contains(objectState.objectID) {
                objectState.version += 1
            }
            objectState.changedKeys = []
        }

        func clearPending(in state: inout State) {
            state.inserted = []
            state.updated = []
            state.deleted = [:]
            state.joinChanges = [:]
            state.joinChangeOrder = [:]
            state.toOneChangeOrder = [:]
            state.orderChanges = [:]
            state.pendingIssues = []
            // What was prefetched described the store before this save.
            state.prefetchedToMany = [:]
            state.generation += 1
        }
    }

    /// What a save's write gave back, applied to the context (``adopt(_:registeringSaved:)``).
    private struct Adoption {
        /// Temporary ID → permanent ID of every inserted object.
        let permanent: [ObjectID: ObjectID]
        /// Every deleted row, by its permanent ID where it has one: a row deleted under
        /// one of its IDs may be registered, or pointed at, under the other.
        let deleted: Set<ObjectID>
        let registeringSaved: Bool

        init(_ result: SaveResult, registeringSaved: Bool) {
            var permanent: [ObjectID: ObjectID] = [:]
            permanent.reserveCapacity(result.primaryKeys.count)
            for (temporary, pk) in result.primaryKeys {
                permanent[temporary] = ObjectID(entityName: temporary.entityName, rootEntityName: temporary.rootEntityName, key: .permanent(pk))
                // Copies of the temporary ID kept elsewhere find the row from now on.
                if case .temporary(let key) = temporary.key { key.noteSaved(as: pk) }
            }
            self.permanent = permanent
            self.deleted = Set(result.deleted.map { $0.permanentID ?? $0 })
            self.registeringSaved = registeringSaved
        }

        var isEmpty: Bool { permanent.isEmpty && deleted.isEmpty }

        /// The context's tables: saved objects registered under their new IDs, deleted ones
        /// dropped, pending changes naming saved objects by their new IDs.
        func register(in state: inout State) {
            if registeringSaved {
                for (temporary, newID) in permanent {
                    if let object = state.registered.removeValue(forKey: temporary) {
                        state.registered[newID] = object
                    }
                }
            }
            if !deleted.isEmpty {
                for id in Array(state.registered.keys) where deleted.contains(id.permanentID ?? id) {
                    if let object = state.registered.removeValue(forKey: id) {
                        object.state.withLock {
                            $0.isDeleted = true
                            $0.context = nil
                        }
                    }
                }
            }
            if !permanent.isEmpty {
                ManagedObjectContext.rename(pendingChangesIn: &state, by: permanent)
            }
        }

        /// One object: its new ID, and its references to saved or deleted objects.
        func adopt(_ objectState: inout ManagedObject.State) {
            if let newID = permanent[objectState.objectID] { objectState.objectID = newID }
            for slot in objectState.toOne.values.indices {
                guard let target = objectState.toOne.values[slot] else { continue }
                if let newID = permanent[target] { objectState.toOne.values[slot] = newID }
                if !deleted.isEmpty, deleted.contains(target.permanentID ?? target) { objectState.toOne.values[slot] = nil }
            }
        }
    }

    /// Names saved objects by their permanent IDs in the changes pending since their save
    /// began (none after an ordinary save, which clears them first).
    fileprivate static func rename(pendingChangesIn state: inout State, by permanent: [ObjectID: ObjectID]) {
        if !state.updated.isEmpty {
            state.updated = Set(state.updated.map { permanent[$0] ?? $0 })
        }
        if !state.deleted.isEmpty {
            state.deleted = Dictionary(state.deleted.map { (permanent[$0.key] ?? $0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        }
        if !state.joinChanges.isEmpty {
            func renamed(_ change: JoinChange) -> JoinChange {
                JoinChange(
                    link: change.link,
                    source: permanent[change.source] ?? change.source,
                    destination: permanent[change.destination] ?? change.destination
                )
            }
            state.joinChanges = Dictionary(state.joinChanges.map { (renamed($0), $1) }, uniquingKeysWith: { _, last in last })
            state.joinChangeOrder = Dictionary(state.joinChangeOrder.map { (renamed($0), $1) }, uniquingKeysWith: { first, last in max(first, last) })
        }
        if !state.orderChanges.isEmpty {
            state.orderChanges = Dictionary(
                state.orderChanges.map { owner, members in
                    (RelationshipKey(owner: permanent[owner.owner] ?? owner.owner, key: owner.key), members.map { permanent[$0] ?? $0 })
                },
                uniquingKeysWith: { _, last in last }
            )
        }
    }
}
