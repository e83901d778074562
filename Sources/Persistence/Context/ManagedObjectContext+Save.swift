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
    func save(validating: Bool, assignedKeys: [ObjectID: Int64] = [:], insertsInBulk: Bool = false, registeringSaved: Bool = true,
              alsoWriting: (@Sendable (any DatabaseConnection, _ keyOf: (ObjectID) -> Int64?) throws -> Void)? = nil) async throws {
        var (planned, objects) = try makePlan(validating: validating)
        planned.assignedKeys = assignedKeys
        planned.insertsInBulk = insertsInBulk
        planned.checksDestinations = validating
        let plan = planned
        guard !plan.isEmpty else {
            // Nothing of the objects to write; what goes with them still is.
            if let alsoWriting { try await store.database.write { connection in try alsoWriting(connection) { $0.primaryKey } } }
            return
        }
        let schema = store.schema
        let model = store.model
        let started = ContinuousClock.now
        let result: SaveResult
        do {
            result = try await store.database.write { connection in
                var executor = SaveExecutor(connection: connection, schema: schema, model: model)
                let result = try executor.run(plan)
                try alsoWriting?(connection) { id in id.primaryKey ?? result.primaryKeys[id] }
                return result
            }
        } catch let error as DatabaseError {
            if error.isUniqueViolation, let conflicts = try? await uniquenessConflicts(among: objects, deleting: plan.deletes), !conflicts.isEmpty {
                throw ConstraintConflictError(conflicts: conflicts)
            }
            throw StoreError(.database, "the save failed and was rolled back", store: store.url.description, underlying: error)
        }
        apply(result, plan: plan, objects: objects, registeringSaved: registeringSaved)
        // What was prefetched described the store before this save.
        state.withLock {
            $0.prefetchedToMany = [:]
            $0.generation += 1
        }
        logger.debug("saved", metadata: [
            LoggingKeys.store: "\(store.url)",
            LoggingKeys.rows: "\(plan.inserts.count + plan.updates.count + result.deleted.count)",
            LoggingKeys.durationMilliseconds: "\(Self.milliseconds(since: started))",
        ])
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = (ContinuousClock.now - start).components
        return elapsed.seconds * 1_000 + elapsed.attoseconds / 1_000_000_000_000_000
    }

    /// Checks the objects and copies their changes out.
    private func makePlan(validating: Bool) throws -> (SavePlan, [ObjectID: ManagedObject]) {
        let (inserted, updated, deleted, joinChanges, pending) = state.withLock { state in
            (state.inserted.compactMap { state.registered[$0] },
             state.updated.compactMap { state.registered[$0] },
             Array(state.deleted.keys),
             state.joinChanges,
             state.pendingIssues)
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
                let value = dialect.databaseValue(snapshot.values.values[slot], type: type)
                if validating, !dialect.textHoldsNUL, case .text(let text) = value, text.utf8.contains(0) {
                    unstorable.append(.init(code: .unstorableCharacter, entity: layout.entity.name, objectID: snapshot.objectID, key: attribute,
                                            message: "\(attribute) holds a NUL character (U+0000), which PostgreSQL text cannot store"))
                }
                values.append((column, value))
            }
            var foreignKeys: [(column: String, relationship: String, destination: ObjectID?)] = []
            for (relationship, column, slot) in layout.foreignKeyColumns where keys?.contains(relationship) ?? true {
                foreignKeys.append((column, relationship, snapshot.toOne.values[slot]))
            }
            let write = SavePlan.RowWrite(id: snapshot.objectID, entityName: layout.entity.name, values: values,
                                          foreignKeys: foreignKeys, expectedVersion: snapshot.version)
            if isInsert { plan.inserts.append(write) } else if !values.isEmpty || !foreignKeys.isEmpty { plan.updates.append(write) }
            for relationship in layout.relationships.values where relationship.isToMany && !relationship.isTransient
            && (relationship.minCount > 0 || relationship.maxCount > 0 || !relationship.isOptional) {
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
        plan.joinChanges = joinChanges.map { ($0.key, $0.value) }
        // A changed join row also changes the objects at both ends, whose counts may now be off.
        for (change, _) in plan.joinChanges {
            for (id, relationship) in [(change.source, change.table.relationship), (change.destination, change.table.inverseRelationship)] {
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

    /// Brings the objects in line with what the save wrote.
    private func apply(_ result: SaveResult, plan: SavePlan, objects: [ObjectID: ManagedObject], registeringSaved: Bool) {
        var permanent: [ObjectID: ObjectID] = [:]
        permanent.reserveCapacity(result.primaryKeys.count)
        for (temporary, pk) in result.primaryKeys {
            permanent[temporary] = ObjectID(entityName: temporary.entityName, rootEntityName: temporary.rootEntityName, key: .permanent(pk))
            // Copies of the temporary ID kept elsewhere find the row from now on.
            if case .temporary(let key) = temporary.key { key.noteSaved(as: pk) }
        }
        state.withLock { state in
            if registeringSaved {
                for (temporary, newID) in permanent {
                    if let object = state.registered.removeValue(forKey: temporary) {
                        state.registered[newID] = object
                    }
                }
            }
            for id in result.deleted {
                if let object = state.registered.removeValue(forKey: id) {
                    object.state.withLock { $0.isDeleted = true; $0.context = nil }
                }
            }
            for object in state.registered.values {
                object.state.withLock { objectState in
                    if let newID = permanent[objectState.objectID] {
                        objectState.objectID = newID
                        objectState.isInserted = false
                        objectState.version = 1
                        objectState.changedKeys = []
                    } else if objects[objectState.objectID] != nil {
                        objectState.version += 1
                        objectState.changedKeys = []
                    } else {
                        objectState.changedKeys = []
                    }
                    // References to saved or deleted objects follow them.
                    for slot in objectState.toOne.values.indices {
                        guard let target = objectState.toOne.values[slot] else { continue }
                        if let newID = permanent[target] { objectState.toOne.values[slot] = newID }
                        if result.deleted.contains(target) { objectState.toOne.values[slot] = nil }
                    }
                }
            }
            state.inserted = []
            state.updated = []
            state.deleted = [:]
            state.joinChanges = [:]
            state.pendingIssues = []
        }
    }
}
