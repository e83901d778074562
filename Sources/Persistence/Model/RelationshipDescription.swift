/// A relationship from one entity to another, as in Core Data's `NSRelationshipDescription`.
///
/// ```swift
/// let pages = RelationshipDescription(name: "pages", destinationEntityName: "Page",
///                                     inverseName: "book", isToMany: true, deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name, e.g. `pages`.
    public var name: String
    /// The name of the entity at the other end.
    public var destinationEntityName: String
    /// The name of the inverse relationship on the destination, if any.
    public var inverseName: String?
    /// Whether the relationship holds many destinations (a to-many) rather than at most one.
    public var isToMany: Bool
    /// Ordered to-many relationships keep the order objects were added in.
    public var isOrdered: Bool
    /// Whether the relationship may have no destination; a save refuses a required to-one that is nil or a required to-many that is empty.
    public var isOptional: Bool
    /// Transient relationships live only in memory and are never stored.
    public var isTransient: Bool
    /// The fewest destinations a to-many relationship may have (0: no limit).
    public var minCount: Int
    /// The most destinations a to-many relationship may have (0: no limit).
    public var maxCount: Int
    /// What deleting the source object does to the destinations.
    public var deleteRule: DeleteRule
    /// The renaming identifier (`elementID`): the name this relationship had in an earlier version.
    public var renamingIdentifier: String?
    /// Changes the relationship's version hash without changing the schema, forcing a migration.
    public var versionHashModifier: String?
    /// Free-form key/value pairs from the model editor.
    public var userInfo: [String: String]

    /// A relationship with Xcode's defaults for a new one: optional, to-one, Nullify;
    /// `maxCount` defaults to 1 for a to-one and to no limit for a to-many.
    public init(
        name: String,
        destinationEntityName: String,
        inverseName: String? = nil,
        isToMany: Bool = false,
        isOrdered: Bool = false,
        isOptional: Bool = true,
        isTransient: Bool = false,
        minCount: Int = 0,
        maxCount: Int? = nil,
        deleteRule: DeleteRule = .nullify,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destinationEntityName
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }

    /// The identifier migrations match on: the renaming identifier if set, else the name.
    public var migrationIdentifier: String { renamingIdentifier ?? name }
}
