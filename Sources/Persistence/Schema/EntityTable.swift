/// The table an entity is stored in, and the column of each of its properties.
public struct EntityTable: Sendable, Hashable {
    /// The entity this is the layout of, e.g. `Book`.
    public let entityName: String
    /// `Z_ENT` of this entity.
    public let entityNumber: Int
    /// `Z_SUPER`: the parent's entity number, 0 for a root.
    public let superNumber: Int
    /// The root of the entity's hierarchy, whose table (``EntityTable/name``) every entity of it shares.
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
    /// To-one relationship name → the column beside its key holding the destination row's
    /// `Z_ENT` (`Z5_OWNER`), where the store has one: Core Data's, for a destination with
    /// sub-entities.
    public let entityTypeColumns: [String: Column]

    /// A table layout; ``StoreSchema`` makes these from a model, so app code rarely needs to.
    public init(
        entityName: String,
        entityNumber: Int,
        superNumber: Int,
        rootEntityName: String,
        name: String,
        columnsByProperty: [String: Column],
        allColumns: [Column],
        entityNumbers: [Int],
        entityTypeColumns: [String: Column] = [:]
    ) {
        self.entityName = entityName
        self.entityNumber = entityNumber
        self.superNumber = superNumber
        self.rootEntityName = rootEntityName
        self.name = name
        self.columnsByProperty = columnsByProperty
        self.allColumns = allColumns
        self.entityNumbers = entityNumbers
        self.entityTypeColumns = entityTypeColumns
    }

    /// The column of an attribute or to-one relationship.
    public func column(for propertyName: String) -> Column? { columnsByProperty[propertyName] }

    /// The column holding the `Z_ENT` of a to-one relationship's destination, where the store has one.
    public func entityTypeColumn(for relationshipName: String) -> Column? { entityTypeColumns[relationshipName] }
}

/// A column of an entity table.
public struct Column: Sendable, Hashable {
    /// What a column holds.
    public enum Kind: Sendable, Hashable {
        /// An attribute's value, of this type.
        case attribute(AttributeType)
        /// A to-one relationship's key: the `Z_PK` of a row of `destination`.
        case foreignKey(destination: String)
        /// `Z<n>_<NAME>` beside a to-one's key: the `Z_ENT` of the destination row.
        case entityType
        /// `Z<n><NAME>` on a destination's table: the key of the source of a to-many
        /// relationship without an inverse (`source` declares it).
        case hiddenForeignKey(source: String)
        /// `Z_FOK_…`: the position of a row in an ordered to-many relationship.
        case orderKey

        var sortRank: Int {
            switch self {
            case .foreignKey, .entityType, .hiddenForeignKey: 0
            case .attribute: 1
            case .orderKey: 2
            }
        }

        /// Whether the column holds another row's `Z_PK`, which fetches and faults look rows
        /// up by: it gets an index.
        var isLookupKey: Bool {
            switch self {
            case .foreignKey, .hiddenForeignKey: true
            case .attribute, .entityType, .orderKey: false
            }
        }

        /// Whether the column holds a property of the table's entities (an attribute or a
        /// to-one's key), rather than a relationship's bookkeeping.
        var isProperty: Bool {
            switch self {
            case .foreignKey, .attribute: true
            case .entityType, .hiddenForeignKey, .orderKey: false
            }
        }
    }

    /// The property the column belongs to: the attribute or relationship it holds or keeps track of.
    public let propertyName: String
    /// The column name, e.g. `ZTITLE` (`ztitle` on PostgreSQL).
    public let name: String
    /// What the column holds.
    public let kind: Kind

    func named(_ dialect: any SQLDialect) -> Column {
        Column(propertyName: propertyName, name: dialect.name(name), kind: kind)
    }
}

/// The join table of a many-to-many relationship.
public struct JoinTable: Sendable, Hashable {
    /// The table name, e.g. `Z_1TAGS`.
    public let name: String
    /// The entity and relationship that own the table (sorted first of the pair).
    public let sourceEntity: String
    /// The relationship of ``JoinTable/sourceEntity`` the table holds.
    public let relationship: String
    /// The entity at the other end of the relationship.
    public let destinationEntity: String
    /// The inverse relationship on the destination, if there is one.
    public let inverseRelationship: String?
    /// The column holding the source object's `Z_PK`.
    public let sourceColumn: String
    /// The column holding the destination object's `Z_PK`.
    public let destinationColumn: String
    /// The position of each destination among the source's: when the relationship that
    /// owns the table is ordered (`Z_FOK_4CREATEDENTRIES`).
    public let orderColumn: String?
    /// The position of each source among the destination's: when the inverse is ordered
    /// (`Z_FOK_2AUTHORS`).
    public var inverseOrderColumn: String? = nil

    /// The order column of one side: the owner's relationship (`fromSource`) or its inverse.
    public func orderColumn(fromSource: Bool) -> String? { fromSource ? orderColumn : inverseOrderColumn }

    /// Every column, keys first.
    public var columns: [String] { [sourceColumn, destinationColumn] + [orderColumn, inverseOrderColumn].compactMap { $0 } }
}
