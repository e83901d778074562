import Foundation
import Logging
import Synchronization

/// A scratch pad of managed objects over a store: Core Data's `NSManagedObjectContext`.
///
/// Insert, fetch, change and delete objects, then ``save()`` them in one transaction.
/// Store work runs on the store's own threads; the context can be used from any task,
/// though, like a Core Data context, one task at a time is the intended use.
///
/// ```swift
/// let context = container.newContext()
/// let book = try context.insertObject(entityName: "Book")
/// book.setValue("The first book", forKey: "title")
/// try await context.save()
/// ```
public final class ManagedObjectContext: Sendable {
    struct State {
        /// Every object the context knows, by ID.
        var registered: [ObjectID: ManagedObject] = [:]
        /// Inserted objects, in insertion order.
        var inserted: [ObjectID] = []
        var updated: Set<ObjectID> = []
        var deleted: [ObjectID: ManagedObject] = [:]
        /// Pending changes of to-many relationships kept in a join table or a hidden key:
        /// `true` adds the pair, `false` removes it.
        var joinChanges: [JoinChange: Bool] = [:]
        /// When each pending pair was last changed: pairs added to an ordered relationship
        /// are saved, and read back before the save, in the order they were added.
        var joinChangeOrder: [JoinChange: UInt64] = [:]
        /// When each saved object's to-one was last set: objects moved into an ordered
        /// to-many (through its inverse) are put at its end in that order.
        var toOneChangeOrder: [ObjectID: UInt64] = [:]
        var nextJoinChange: UInt64 = 0
        /// Ordered to-many relationships given a whole new order (``ManagedObject/setDestinations(_:forKey:)``):
        /// the members in their order, written over the stored order keys by the save.
        var orderChanges: [RelationshipKey: [ObjectID]] = [:]
        /// Problems found while changing objects (a misused key), reported by `save()`.
        var pendingIssues: [ValidationError.Issue] = []
        var nextTemporaryID: UInt64 = 1
        /// Saved destinations of to-many relationships loaded ahead (`prefetchDestinations`),
        /// dropped by the next save.
        var prefetchedToMany: [RelationshipKey: [ManagedObject]] = [:]
        /// Moves on with every save and reset: what was read before one of them is not kept after it.
        var generation: UInt64 = 0
        /// Saves begun and not yet ended (``beginSave(assignedKeys:insertsInBulk:)``): their
        /// objects count as saved, but the store does not hold them yet.
        var savesInFlight = 0
    }

    /// A to-many relationship of one object.
    struct RelationshipKey: Hashable {
        let owner: ObjectID
        let key: String
    }

    /// One pair of a to-many relationship kept in a join table (named from the table's owning
    /// side) or in a hidden key (source and destination of the relationship).
    struct JoinChange: Sendable, Hashable {
        let link: ToManyLink
        let source: ObjectID
        let destination: ObjectID
    }

    /// The store the context fetches from and saves to.
    public let store: PersistentStore
    let layouts: [String: EntityLayout]
    /// Where each entity's properties are in a row of a ``SelectQuery`` on its table (the
    /// same for every entity of a hierarchy, whose tables have the same columns).
    let rowLayouts: [String: EntityLayout.RowLayout]
    let state = Mutex(State())
    let logger: Logger

    init(store: PersistentStore, logger: Logger) {
        self.store = store
        self.logger = logger
        // Worked out once per store, not per context: a service makes a context per request.
        self.layouts = store.layouts
        self.rowLayouts = store.rowLayouts
    }

    /// The model of the context's store.
    public var model: ManagedObjectModel { store.model }

    /// Whether anything was inserted, changed or deleted since the last save.
    public var hasChanges: Bool {
        state.withLock { !$0.inserted.isEmpty || !$0.updated.isEmpty || !$0.deleted.isEmpty || !$0.joinChanges.isEmpty }
    }

    /// The objects inserted since the last save.
    public var insertedObjects: [ManagedObject] {
        state.withLock { state in state.inserted.compactMap { state.registered[$0] } }
    }

    /// The objects changed since the last save (not inserted or deleted ones).
    public var updatedObjects: [ManagedObject] {
        state.withLock { state in state.updated.compactMap { state.registered[$0] } }
    }

    /// The objects deleted since the last save.
    public var deletedObjects: [ManagedObject] {
        state.withLock { Array($0.deleted.values) }
    }

    func layout(_ entityName: String) throws(ContextError) -> EntityLayout {
        guard let layout = layouts[entityName] else {
            throw ContextError("the model '\(store.model.name)' has no entity '\(entityName)'")
        }
        return layout
    }

    /// An ID for the saved row of an entity with this primary key.
    public func objectID(entityName: String, primaryKey: Int64) throws(ContextError) -> ObjectID {
        let layout = try layout(entityName)
        return ObjectID(entityName: entityName, rootEntityName: layout.table.rootEntityName, key: .permanent(primaryKey))
    }

    // MARK: Inserting and deleting

    /// Inserts a new object of an entity, with the model's default values.
    ///
    /// - Throws: ``ContextError`` for an unknown or abstract entity.
    @discardableResult
    public func insertObject(entityName: String) throws(ContextError) -> ManagedObject {
        let layout = try layout(entityName)
        guard !layout.entity.isAbstract else {
            throw ContextError("the entity '\(entityName)' is abstract; insert one of its sub-entities")
        }
        let (values, toOne) = (layout.defaultValues, layout.noDestinations)
        return state.withLock { state in
            let id = ObjectID(entityName: entityName, rootEntityName: layout.table.rootEntityName, key: .temporary(.init(state.nextTemporaryID)))
            state.nextTemporaryID += 1
            let object = ManagedObject(
                layout: layout,
                state: .init(
                    objectID: id,
                    values: values,
                    toOne: toOne,
                    changedKeys: layout.attributeKeys,
                    version: 0,
                    isInserted: true,
                    context: self
                )
            )
            state.registered[id] = object
            state.inserted.append(id)
            return object
        }
    }

    /// Marks an object for deletion; the save applies the model's delete rules.
    public func delete(_ object: ManagedObject) {
        let id = object.objectID
        object.state.withLock { $0.isDeleted = true }
        state.withLock { state in
            if let index = state.inserted.firstIndex(of: id) {
                // Never saved: forget it, and any many-to-many rows it was in.
                state.inserted.remove(at: index)
                state.registered[id] = nil
                state.joinChanges = state.joinChanges.filter { $0.key.source != id && $0.key.destination != id }
                state.joinChangeOrder = state.joinChangeOrder.filter { state.joinChanges[$0.key] != nil }
            } else {
                state.updated.remove(id)
                state.deleted[id] = object
            }
        }
    }

    /// Forgets every registered object and unsaved change.
    public func reset() {
        forgetObjects(keepingHeldOnes: false)
    }

    /// Forgets the registered objects nobody else holds and keeps the ones still held
    /// outside the context, so that they stay usable: a Core Data context holds its
    /// unchanged objects weakly in the same way. A migration calls it after saving each
    /// batch, so memory does not grow with the store while a policy's look-up of objects
    /// made in earlier batches (the authors so far, by name) keeps working.
    func forgetObjectsNotHeldElsewhere() {
        forgetObjects(keepingHeldOnes: true)
    }

    private func forgetObjects(keepingHeldOnes: Bool) {
        state.withLock { state in
            var kept: [ManagedObject] = []
            // Walked by index, checked in place: an iterator (or `indices`) would hold the
            // dictionary's storage, the check would copy it, and every object would look held.
            var index = state.registered.startIndex
            while index != state.registered.endIndex {
                if keepingHeldOnes, !isKnownUniquelyReferenced(&state.registered.values[index]) {
                    kept.append(state.registered.values[index])
                } else {
                    state.registered.values[index].state.withLock { $0.context = nil }
                }
                state.registered.formIndex(after: &index)
            }
            // Emptied, not replaced: a migration forgets after every batch, and the next
            // batch fills tables of the same size without growing them again.
            state.registered.removeAll(keepingCapacity: true)
            for object in kept { state.registered[object.objectID] = object }
            state.inserted.removeAll(keepingCapacity: true)
            state.updated.removeAll(keepingCapacity: true)
            state.deleted.removeAll(keepingCapacity: true)
            state.joinChanges.removeAll(keepingCapacity: true)
            state.joinChangeOrder.removeAll(keepingCapacity: true)
            state.toOneChangeOrder.removeAll(keepingCapacity: true)
            state.pendingIssues.removeAll()
            state.prefetchedToMany.removeAll(keepingCapacity: true)
            state.generation += 1
        }
    }

    func noteChanged(_ object: ManagedObject) {
        let (id, inserted, deleted) = object.state.withLock { ($0.objectID, $0.isInserted, $0.isDeleted) }
        guard !inserted, !deleted else { return }
        _ = state.withLock { $0.updated.insert(id) }
    }

    func noteIssue(_ issue: ValidationError.Issue) {
        state.withLock { $0.pendingIssues.append(issue) }
    }

    /// Every object the context holds, as Core Data's `registeredObjects`: those inserted,
    /// fetched or reached through a relationship since the context was made or last reset,
    /// deleted ones until the save that deletes them.
    ///
    /// ```swift
    /// // Find or create among the objects in hand, as a migration policy may:
    /// let maker = context.registeredObjects.first { $0.entity.name == "Maker" && $0.value(forKey: "name") == name }
    ///     ?? (try context.insertObject(entityName: "Maker"))
    /// ```
    public var registeredObjects: Set<ManagedObject> {
        state.withLock { Set($0.registered.values) }
    }

    /// The registered object with this ID, if the context has it (found through a temporary
    /// ID too, once its object is saved).
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        state.withLock { state in
            if let object = state.registered[id] { return object }
            guard id.isTemporaryID, let saved = id.permanentID else { return nil }
            return state.registered[saved]
        }
    }
}
