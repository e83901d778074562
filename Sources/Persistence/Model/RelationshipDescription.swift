/// A relationship from one entity to another, as in Core Data's `NSRelationshipDescription`.
///
/// ```swift
/// let pages = RelationshipDescription(name: "pages", destinationEntityName: "Page",
///                                     inverseName: "book", isToMany: true, deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Sendable, Hashable {
    public var name: String
    /// The name of the entity at the other end.
    public var destinationEntityName: String
    /// The name of the inverse relationship on the destination, if any.
    public var inverseName: String?
    public var isToMany: Bool
    /// Ordered to-many relationships keep the order objects were added in.
    public var isOrdered: Bool
    public var isOptional: Bool
    public var isTransient: Bool
    /// The fewest destinations a to-many relationship may have (0: no limit).
    public var minCount: Int
    /// The most destinations a to-many relationship may have (0: no limit).
    public var maxCount: Int
    public var deleteRule: DeleteRule
    /// The renaming identifier (`elementID`): the name this relationship had in an earlier version.
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    public var userInfo: [String: String]

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
