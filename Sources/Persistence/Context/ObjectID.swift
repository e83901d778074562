import Synchronization

/// The identity of a managed object: its entity and its primary key (`Z_PK`).
///
/// An object inserted into a context has a temporary ID until the context saves it;
/// saving gives it a permanent one, as in Core Data. Two IDs are equal when they name the
/// same row: the same entity hierarchy (root entity) and key.
///
/// A temporary ID kept elsewhere (a migration policy's look-up in the manager's
/// `userInfo`) still finds its object once the object is saved: its ``primaryKey`` is the
/// row's from then on, and ``ManagedObjectContext/existingObject(with:)`` resolves it.
///
/// ```swift
/// let author = try context.insertObject(entityName: "Author")
/// let id = author.objectID                 // Author/t1
/// try await context.save()
/// id.primaryKey                            // the saved row's Z_PK
/// try await context.existingObject(with: id) === author
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    enum Key: Sendable, Hashable {
        case permanent(Int64)
        case temporary(TemporaryKey)
    }

    /// A temporary key, shared by every copy of the ID, so that all of them learn the
    /// primary key its object is saved under.
    final class TemporaryKey: Sendable, Hashable {
        let number: UInt64
        /// The saved row's `Z_PK`, `Int64.min` until then.
        private let savedKey = Atomic<Int64>(.min)

        init(_ number: UInt64) { self.number = number }

        var primaryKey: Int64? {
            let key = savedKey.load(ordering: .acquiring)
            return key == .min ? nil : key
        }

        func noteSaved(as primaryKey: Int64) {
            savedKey.store(primaryKey, ordering: .releasing)
        }

        static func == (lhs: TemporaryKey, rhs: TemporaryKey) -> Bool { lhs.number == rhs.number }
        func hash(into hasher: inout Hasher) { hasher.combine(number) }
    }

    /// The object's entity, or an ancestor of it when the ID came from a foreign key.
    public let entityName: String
    /// The root of the entity's hierarchy, whose table holds the row.
    public let rootEntityName: String
    let key: Key

    init(entityName: String, rootEntityName: String, key: Key) {
        self.entityName = entityName
        self.rootEntityName = rootEntityName
        self.key = key
    }

    /// An ID whose entity is its own root (no parent entity), e.g. parsed from `Book/p12`.
    init(entityName: String, key: Key) {
        self.init(entityName: entityName, rootEntityName: entityName, key: key)
    }

    /// A permanent ID for a row of an entity without a parent entity. For sub-entities
    /// use ``ManagedObjectContext/objectID(entityName:primaryKey:)``, which knows the root.
    public static func permanent(entityName: String, primaryKey: Int64) -> ObjectID {
        ObjectID(entityName: entityName, key: .permanent(primaryKey))
    }

    /// The row's `Z_PK`, once saved (through a temporary ID too, once its object is saved).
    public var primaryKey: Int64? {
        switch key {
        case .permanent(let pk): pk
        case .temporary(let temporary): temporary.primaryKey
        }
    }

    /// The permanent ID of the same row: this one, or the saved object's for a temporary ID
    /// whose object was saved since; `nil` while the object is unsaved.
    var permanentID: ObjectID? {
        switch key {
        case .permanent: self
        case .temporary(let temporary):
            temporary.primaryKey.map { ObjectID(entityName: entityName, rootEntityName: rootEntityName, key: .permanent($0)) }
        }
    }

    /// The order of a temporary ID among its context's inserts; 0 for a permanent ID.
    var temporaryNumber: UInt64 {
        if case .temporary(let temporary) = key { temporary.number } else { 0 }
    }

    /// Whether the ID is a temporary one, of an object inserted and not saved yet (Core Data's `isTemporaryID`).
    public var isTemporaryID: Bool {
        if case .temporary = key { true } else { false }
    }

    /// Whether both IDs name the same object: the same entity hierarchy and the same key.
    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.rootEntityName == rhs.rootEntityName && lhs.key == rhs.key
    }

    /// The key alone: hashing the entity's name too would cost more than the rare
    /// collision of equal keys of different hierarchies, which `==` tells apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }

    /// `Book/p12` for a saved object, `Book/t3` for a temporary ID.
    public var description: String {
        switch key {
        case .permanent(let pk): "\(entityName)/p\(pk)"
        case .temporary(let temporary): "\(entityName)/t\(temporary.number)"
        }
    }
}
