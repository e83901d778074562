import Foundation
import Synchronization

/// An object of an entity, registered in a ``ManagedObjectContext``: Core Data's
/// `NSManagedObject`.
///
/// Attributes are read and written by key, synchronously; relationships that may need the
/// store are read with `async` calls. Changes stay in the context until it saves.
///
/// ```swift
/// let book = context.insertObject(entityName: "Book")
/// book.setValue("The first book", forKey: "title")
/// book.setValue(10.0, forKey: "price")
/// let pages = try await book.destinations(forKey: "pages")
/// ```
public final class ManagedObject: Sendable, Hashable, CustomStringConvertible {
    struct State {
        var objectID: ObjectID
        /// Attribute values, stored and transient.
        var values: PropertyValues<AttributeValue>
        /// To-one relationships: the destination's ID, `nil` for none.
        var toOne: PropertyValues<ObjectID?>
        /// Keys changed since the last save or fetch.
        var changedKeys: Set<String> = []
        /// `Z_OPT` as last read or written: the row's version for optimistic locking.
        var version: Int64
        /// A destination of a hook with declared values: the bits of the declared keys set
        /// (``DeclaredAccess``), each set counted, also of an equal value.
        var declaredSets: UInt64 = 0
        var isInserted: Bool
        var isDeleted = false
        weak var context: ManagedObjectContext?
    }

    /// The entity this object is an instance of.
    public let entity: EntityDescription
    let layout: EntityLayout
    let state: Mutex<State>

    init(layout: EntityLayout, state: State) {
        self.entity = layout.entity
        self.layout = layout
        self.state = Mutex(state)
    }

    /// The object's ID; temporary until its context first saves it.
    public var objectID: ObjectID { state.withLock { $0.objectID } }

    /// The context the object belongs to.
    public var managedObjectContext: ManagedObjectContext? { state.withLock { $0.context } }

    /// Inserted in its context and not yet saved.
    public var isInserted: Bool { state.withLock { $0.isInserted } }

    /// Deleted in its context (or deleted by a save).
    public var isDeleted: Bool { state.withLock { $0.isDeleted } }

    /// Has unsaved changes: inserted, deleted or changed.
    public var hasChanges: Bool { state.withLock { $0.isInserted || $0.isDeleted || !$0.changedKeys.isEmpty } }

    /// The keys changed since the last save.
    public var changedKeys: Set<String> { state.withLock { $0.changedKeys } }

    // MARK: Attributes

    /// The value of an attribute (or the ID of a to-one destination as `.null`/not available).
    ///
    /// Unknown keys return `.null`; ``validateKey(_:)`` tells whether a key exists.
    public func value(forKey key: String) -> AttributeValue {
        if let declared = layout.declared {
            let slot = layout.attributeSlots.index[key]
            guard let slot, declared.bit(of: key, slot: slot) != nil else { return .null }
            return state.withLock { $0.values.values[slot] }
        }
        return state.withLock { $0.values[key] ?? .null }
    }

    /// Sets an attribute. Numbers are converted to the attribute's type where exact
    /// (an integer into a `Double` attribute); anything else is kept and reported by
    /// the context's save as a validation error.
    public func setValue(_ value: AttributeValue, forKey key: String) {
        if let declared = layout.declared {
            let slot = layout.attributeSlots.index[key]
            guard let slot, let bit = declared.bit(of: key, slot: slot) else { return }
            // Every set counts, also of an equal value: "é" precomposed or not, 0.0 or -0.0.
            if declared.side == .destination {
                let coerced = Self.coerce(value, to: layout.attributesBySlot[slot].type)
                state.withLock { state in
                    state.values.values[slot] = coerced
                    state.declaredSets |= 1 << UInt64(bit)
                }
                return
            }
        }
        setValue(value, forKey: key, slot: layout.attributeSlots.index[key])
    }

    /// The value in an attribute's slot of ``layout`` (see ``EntityLayout/attributeSlots``):
    /// for code that resolved the name once, not per object.
    func value(atSlot slot: Int) -> AttributeValue {
        state.withLock { $0.values.values[slot] }
    }

    /// ``setValue(_:forKey:)`` with the key's slot in ``layout`` found already (`nil`: none).
    func setValue(_ value: AttributeValue, forKey key: String, slot: Int?) {
        let coerced = slot.map { Self.coerce(value, to: layout.attributesBySlot[$0].type) } ?? value
        let changed = state.withLock { state in
            let old: AttributeValue?
            if let slot {
                old = state.values.values[slot]
                state.values.values[slot] = coerced
            } else {
                old = state.values.updateValue(coerced, forKey: key)
            }
            guard old != coerced || slot == nil else { return false }
            // An inserted object writes every key when saved: nothing more to note.
            guard !state.isInserted else { return false }
            state.changedKeys.insert(key)
            return true
        }
        // Setting a value to what it is already is no change; noting it would leave the
        // context with changes that no save ever clears.
        if changed { managedObjectContext?.noteChanged(self) }
    }

    /// Whether the entity has an attribute or relationship with this name.
    public func validateKey(_ key: String) -> Bool {
        layout.attributes[key] != nil || layout.relationships[key] != nil
    }

    static func coerce(_ value: AttributeValue, to type: AttributeType) -> AttributeValue {
        switch (value, type) {
        case (.integer(let v), .double), (.integer(let v), .float): .double(Double(v))
        case (.integer(let v), .decimal): .decimal(Decimal(v))
        case (.double(let v), .decimal): .decimal(Decimal(string: String(v)) ?? Decimal(v))
        case (.double(let v), .integer16), (.double(let v), .integer32), (.double(let v), .integer64):
            v.rounded() == v && abs(v) < 9.2e18 ? .integer(Int64(v)) : value
        case (.integer(let v), .boolean) where v == 0 || v == 1: .bool(v == 1)
        case (.bool(let v), .integer16), (.bool(let v), .integer32), (.bool(let v), .integer64): .integer(v ? 1 : 0)
        case (.string(let v), .uri): URL(string: v).map(AttributeValue.uri) ?? value
        case (.string(let v), .uuid): UUID(uuidString: v).map(AttributeValue.uuid) ?? value
        default: value
        }
    }

    // MARK: Relationships

    /// The ID of a to-one relationship's destination, without touching the store.
    public func destinationID(forKey key: String) -> ObjectID? {
        layout.declared?.noteUndeclared(key)
        return state.withLock { $0.toOne[key] ?? nil }
    }

    /// The destination of a to-one relationship, loaded from the store if needed.
    public func destination(forKey key: String) async throws -> ManagedObject? {
        layout.declared?.noteUndeclared(key)
        guard let context = managedObjectContext else { throw ContextError.detached(objectID) }
        guard let id = destinationID(forKey: key) else { return nil }
        return try await context.existingObject(with: id)
    }

    /// The destinations of a to-many relationship, as saved in the store plus the
    /// context's unsaved changes. Ordered relationships come in their order.
    public func destinations(forKey key: String) async throws -> [ManagedObject] {
        layout.declared?.noteUndeclared(key)
        guard let context = managedObjectContext else { throw ContextError.detached(objectID) }
        return try await context.destinations(of: self, key: key)
    }

    /// Sets a to-one relationship, keeping the inverse in step.
    public func setDestination(_ destination: ManagedObject?, forKey key: String) {
        layout.declared?.noteUndeclared(key)
        guard let context = managedObjectContext else { return }
        context.setToOne(self, key: key, destination: destination)
    }

    /// Adds an object to a to-many relationship, keeping the inverse in step.
    public func addDestination(_ destination: ManagedObject, forKey key: String) {
        layout.declared?.noteUndeclared(key)
        managedObjectContext?.changeToMany(self, key: key, destination: destination, add: true)
    }

    /// Sets a to-many relationship to exactly these objects, keeping the inverse in step:
    /// those not among them leave it, the others join it, and an ordered relationship takes
    /// their order (Core Data's `setValue(NSOrderedSet(array:), forKey:)`), also when its
    /// members stay the same. The save gives the members order keys 2 048, 3 072, … as Core
    /// Data spaces them.
    ///
    /// ```swift
    /// let steps = try await recipe.destinations(forKey: "steps")
    /// try await recipe.setDestinations(steps.reversed(), forKey: "steps")
    /// try await context.save()
    /// ```
    ///
    /// - Throws: ``ContextError`` when the object has no context or `key` is not a to-many
    ///   relationship; the store's error when its current members cannot be read.
    public func setDestinations(_ destinations: [ManagedObject], forKey key: String) async throws {
        layout.declared?.noteUndeclared(key)
        guard let context = managedObjectContext else { throw ContextError.detached(objectID) }
        let current = try await context.destinations(of: self, key: key)
        context.setToMany(self, key: key, to: destinations, replacing: current)
    }

    /// Removes an object from a to-many relationship, keeping the inverse in step.
    public func removeDestination(_ destination: ManagedObject, forKey key: String) {
        layout.declared?.noteUndeclared(key)
        managedObjectContext?.changeToMany(self, key: key, destination: destination, add: false)
    }

    // MARK: Hashable

    /// Whether both are the same instance: objects are compared by identity, as in Core Data.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    /// Hashes the instance's identity, in step with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The entity, the object's ID and the values it holds, by key, for debugging: `<Book Book/p12 price=10.0 title="…">`.
    public var description: String {
        state.withLock { state in
            let values = state.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "<\(entity.name) \(state.objectID) \(values.joined(separator: " "))>"
        }
    }
}
