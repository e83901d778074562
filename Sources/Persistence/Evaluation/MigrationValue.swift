/// What a value expression evaluates to while a row is migrated.
///
/// ```swift
/// // $source.title → .value(.string("The first book"))
/// // $source.pages → .objects([…])
/// ```
public enum MigrationValue: Sendable {
    /// An attribute value: of an attribute, a constant, or computed.
    case value(AttributeValue)
    /// One instance: `$source`, `$destination`, or the destination of a to-one relationship.
    case object(ManagedObject)
    /// Several instances: the destinations of a to-many relationship.
    case objects([ManagedObject])
    /// A collection of values (`{1, 2}`, `componentsSeparatedByString:`, `$source.pages.number`).
    case list([MigrationValue])
    /// `$manager`: the migration manager running the mapping.
    case manager(MigrationManager)
    /// `$entityMapping`: the entity mapping being run.
    case entityMapping(EntityMapping)
    /// `$propertyMapping`: the property mapping whose value expression is evaluated.
    case propertyMapping(PropertyMapping)
    /// `$entityPolicy`: the entity mapping's migration policy.
    case policy(EntityMigrationPolicy)

    /// A nil attribute value.
    public static let null = MigrationValue.value(.null)

    /// The attribute value, when this is one.
    public var attributeValue: AttributeValue? {
        if case .value(let value) = self { value } else { nil }
    }

    /// The objects this value holds: one, several or none.
    public var managedObjects: [ManagedObject]? {
        switch self {
        case .object(let object): [object]
        case .objects(let objects): objects
        case .value(.null): []
        case .list(let items):
            items.allSatisfy({ if case .object = $0 { true } else { false } })
                ? items.compactMap { if case .object(let o) = $0 { o } else { nil } } : nil
        default: nil
        }
    }

    var kindName: String {
        switch self {
        case .value(let value): value.kindName
        case .object: "object"
        case .objects: "objects"
        case .list: "list"
        case .manager: "migration manager"
        case .entityMapping: "entity mapping"
        case .propertyMapping: "property mapping"
        case .policy: "entity migration policy"
        }
    }
}
