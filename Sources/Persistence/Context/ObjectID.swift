/// The identity of a managed object: its entity and its primary key (`Z_PK`).
///
/// An object inserted into a context has a temporary ID until the context saves it;
/// saving gives it a permanent one, as in Core Data. Two IDs are equal when they name the
/// same row: the same entity hierarchy (root entity) and key.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    enum Key: Sendable, Hashable {
        case permanent(Int64)
        case temporary(UInt64)
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

    /// The row's `Z_PK`, once saved.
    public var primaryKey: Int64? {
        if case .permanent(let pk) = key { pk } else { nil }
    }

    public var isTemporaryID: Bool {
        if case .temporary = key { true } else { false }
    }

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
        case .temporary(let n): "\(entityName)/t\(n)"
        }
    }
}
