/// The identity of a managed object: its entity and its primary key (`Z_PK`).
///
/// An object inserted into a context has a temporary ID until the context saves it;
/// saving gives it a permanent one, as in Core Data.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    enum Key: Sendable, Hashable {
        case permanent(Int64)
        case temporary(UInt64)
    }

    /// The entity of the object (the concrete entity, not the root of its hierarchy).
    public let entityName: String
    let key: Key

    init(entityName: String, key: Key) {
        self.entityName = entityName
        self.key = key
    }

    /// A permanent ID for the row with this primary key.
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

    public var description: String {
        switch key {
        case .permanent(let pk): "\(entityName)/p\(pk)"
        case .temporary(let n): "\(entityName)/t\(n)"
        }
    }
}
