/// An entity of a model, as in Core Data's `NSEntityDescription`.
///
/// `attributes` and `relationships` are the properties declared on this entity; a
/// sub-entity also has its ancestors' properties, which ``ManagedObjectModel`` resolves
/// (``ManagedObjectModel/attributes(of:)``).
///
/// ```swift
/// let page = EntityDescription(name: "Page", attributes: [
///     AttributeDescription(name: "number", type: .integer16),
/// ])
/// ```
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name, e.g. `Book`.
    public var name: String
    /// Whether the entity has no objects of its own, only those of its sub-entities.
    public var isAbstract: Bool
    /// The parent entity's name; a sub-entity is stored in its root entity's table.
    public var parentName: String?
    /// The attributes declared on this entity (not those inherited).
    public var attributes: [AttributeDescription]
    /// The relationships declared on this entity (not those inherited).
    public var relationships: [RelationshipDescription]
    /// The renaming identifier (`elementID`): the name this entity had in an earlier version.
    public var renamingIdentifier: String?
    /// Changes the entity's version hash without changing its schema, forcing a migration.
    public var versionHashModifier: String?
    /// The class name app code uses for it (`representedClassName`), kept for Xcode.
    public var representedClassName: String?
    /// Free-form key/value pairs from the model editor.
    public var userInfo: [String: String]
    /// Uniqueness constraints (Xcode's Constraints, `<uniquenessConstraints>`): each lists the
    /// properties whose values together are unique among the entity's objects.
    public var uniquenessConstraints: [[String]]
    /// Fetch indexes (Xcode's Indexes, `<fetchIndex>`).
    public var fetchIndexes: [FetchIndex]

    /// An entity with Xcode's defaults for a new one: concrete, no parent, no constraints or indexes.
    public init(
        name: String,
        isAbstract: Bool = false,
        parentName: String? = nil,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        representedClassName: String? = nil,
        userInfo: [String: String] = [:],
        uniquenessConstraints: [[String]] = [],
        fetchIndexes: [FetchIndex] = []
    ) {
        self.name = name
        self.isAbstract = isAbstract
        self.parentName = parentName
        self.attributes = attributes
        self.relationships = relationships
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.representedClassName = representedClassName
        self.userInfo = userInfo
        self.uniquenessConstraints = uniquenessConstraints
        self.fetchIndexes = fetchIndexes
    }

    /// The identifier migrations match on: the renaming identifier if set, else the name.
    public var migrationIdentifier: String { renamingIdentifier ?? name }

    /// The declared attribute with this name.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The declared relationship with this name.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }
}
