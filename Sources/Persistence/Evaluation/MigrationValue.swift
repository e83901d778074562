/// What a value expression evaluates to while a row is migrated.
///
/// ```swift
/// // $source.title → .value(.string("The first book"))
/// // $source.pages → .objects([…])
/// ```
public enum MigrationValue: Sendable {
    case value(AttributeValue)
    case object(ManagedObject)
    case objects([ManagedObject])
    /// A collection of values (`{1, 2}`, `componentsSeparatedByString:`, `$source.pages.number`).
    case list([MigrationValue])
    case manager(MigrationManager)
    case entityMapping(EntityMapping)
    case propertyMapping(PropertyMapping)
    case policy(EntityMigrationPolicy)

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
