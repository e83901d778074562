/// The table an entity is stored in, and the column of each of its properties.
public struct EntityTable: Sendable, Hashable {
    public let entityName: String
    /// `Z_ENT` of this entity.
    public let entityNumber: Int
    /// `Z_SUPER`: the parent's entity number, 0 for a root.
    public let superNumber: Int
    public let rootEntityName: String
    /// The table name, e.g. `ZBOOK` (`zbook` on PostgreSQL).
    public let name: String
    /// Property name → column, for this entity's stored attributes and to-one relationships.
    public let columnsByProperty: [String: Column]
    /// Every column of the table after `Z_PK`, `Z_ENT`, `Z_OPT`, in table order
    /// (the whole hierarchy's columns).
    public let allColumns: [Column]
    /// The entity numbers a fetch of this entity matches: itself and its descendants.
    public let entityNumbers: [Int]

    /// The column of an attribute or to-one relationship.
    public func column(for propertyName: String) -> Column? { columnsByProperty[propertyName] }
}

/// A column of an entity table.
public struct Column: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case attribute(AttributeType)
        case foreignKey(destination: String)
        /// `Z_FOK_…`: the position of a row in an ordered to-many relationship.
        case orderKey

        var sortRank: Int {
            switch self {
            case .foreignKey: 0
            case .attribute: 1
            case .orderKey: 2
            }
        }
    }

    public let propertyName: String
    public let name: String
    public let kind: Kind

    func named(_ dialect: any SQLDialect) -> Column {
        Column(propertyName: propertyName, name: dialect.name(name), kind: kind)
    }
}

/// The join table of a many-to-many relationship.
public struct JoinTable: Sendable, Hashable {
    public let name: String
    /// The entity and relationship that own the table (sorted first of the pair).
    public let sourceEntity: String
    public let relationship: String
    public let destinationEntity: String
    public let inverseRelationship: String?
    /// The column holding the source object's `Z_PK`.
    public let sourceColumn: String
    /// The column holding the destination object's `Z_PK`.
    public let destinationColumn: String
    /// The position column when the relationship is ordered.
    public let orderColumn: String?
}
