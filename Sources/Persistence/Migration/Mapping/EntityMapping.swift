/// How instances of one source entity become instances of one destination entity:
/// Core Data's `NSEntityMapping`.
///
/// ```swift
/// var mapping = EntityMapping(name: "PublicationToPublication", type: .custom,
///                             sourceEntityName: "Publication", destinationEntityName: "Publication")
/// mapping.policyName = "PublicationToPublicationMigrationPolicy"
/// mapping.attributeMappings = [PropertyMapping(name: "title", valueExpression: try Expression(format: "$source.title"))]
/// ```
public struct EntityMapping: Sendable, Hashable {
    /// Core Data's entity mapping types.
    public enum MappingType: String, Sendable, Hashable, CaseIterable, Codable {
        /// Create destination instances that have no source (`NSAddEntityMappingType`).
        case add
        /// Drop the source instances (`NSRemoveEntityMappingType`).
        case remove
        /// Copy instances of an unchanged entity (`NSCopyEntityMappingType`).
        case copy
        /// Transform instances through property mappings (`NSTransformEntityMappingType`).
        case transform
        /// Run a custom ``EntityMigrationPolicy`` (`NSCustomEntityMappingType`).
        case custom
    }

    /// The mapping's name, e.g. `BookToPublication`; how relationship mappings refer to it.
    public var name: String
    /// What the mapping does with the instances: add, remove, copy, transform or a custom policy.
    public var type: MappingType
    /// The entity whose instances are read; `nil` for an ``MappingType/add`` mapping.
    public var sourceEntityName: String?
    /// The entity whose instances are created; `nil` for a ``MappingType/remove`` mapping.
    public var destinationEntityName: String?
    /// Only source instances matching this predicate are migrated (Core Data's source expression).
    public var sourceFilter: Predicate?
    /// How each destination attribute gets its value; an attribute without one keeps its default.
    public var attributeMappings: [PropertyMapping]
    /// How each destination relationship gets its objects, usually by
    /// ``Expression/destinationInstances(forEntityMappingNamed:sourceInstances:)``.
    public var relationshipMappings: [PropertyMapping]
    /// The registered name of the ``EntityMigrationPolicy`` to run, if any.
    public var policyName: String?
    /// The mapping's user info, as the mapping file carries it, for a policy to read.
    public var userInfo: [String: AttributeValue]

    /// An entity mapping; the property mappings, filter and policy default to none.
    public init(
        name: String,
        type: MappingType,
        sourceEntityName: String?,
        destinationEntityName: String?,
        sourceFilter: Predicate? = nil,
        attributeMappings: [PropertyMapping] = [],
        relationshipMappings: [PropertyMapping] = [],
        policyName: String? = nil,
        userInfo: [String: AttributeValue] = [:]
    ) {
        self.name = name
        self.type = type
        self.sourceEntityName = sourceEntityName
        self.destinationEntityName = destinationEntityName
        self.sourceFilter = sourceFilter
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.policyName = policyName
        self.userInfo = userInfo
    }

    /// The attribute or relationship mapping for a destination property.
    public func propertyMapping(named name: String) -> PropertyMapping? {
        attributeMappings.first { $0.name == name } ?? relationshipMappings.first { $0.name == name }
    }
}
