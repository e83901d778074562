import Foundation

/// How a store of one model version becomes a store of the next: Core Data's
/// `NSMappingModel`.
///
/// Get one by inference for lightweight changes, or load one from a mapping file:
///
/// ```swift
/// let inferred = try MappingModel.inferred(from: v1, to: v2)
/// let model3To4 = try MappingModel(contentsOf: url, versions: versionedModel)
/// ```
///
/// Entity mappings run in their order: a mapping that looks up another's destination
/// instances (`destinationInstancesForEntityMappingNamed:`) must come after it.
public struct MappingModel: Sendable, Hashable {
    /// The mapping's name, the file name without extension for loaded ones (`Model3To4`).
    public var name: String
    /// The name of the model version the mapping reads (`BookStore 3`).
    public var sourceModelName: String
    /// The name of the model version the mapping writes (`BookStore 4`).
    public var destinationModelName: String
    /// The entity version hashes of the two models: how a migrator finds the mapping for a
    /// step, as Core Data searches its bundles.
    public var sourceEntityVersionHashes: [String: Data]
    /// The destination model's entity version hashes, matched as ``sourceEntityVersionHashes`` is.
    public var destinationEntityVersionHashes: [String: Data]
    /// The entity mappings, run in this order.
    public var entityMappings: [EntityMapping]
    /// Whether the mapping was inferred (a lightweight migration).
    public var isInferred: Bool
    /// The file the mapping was loaded from, for error messages.
    public var file: String?
    /// What the reader left out and why, for `persistence validate` to show: objects Xcode
    /// left in an `xcmapping.xml` that no entity mapping owns, which Core Data ignores too.
    public var notes: [String] = []

    /// A mapping model between two model versions, keeping their names and entity version hashes.
    public init(
        name: String,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        entityMappings: [EntityMapping],
        isInferred: Bool = false,
        file: String? = nil
    ) {
        self.name = name
        self.sourceModelName = source.name
        self.destinationModelName = destination.name
        self.sourceEntityVersionHashes = source.entityVersionHashes
        self.destinationEntityVersionHashes = destination.entityVersionHashes
        self.entityMappings = entityMappings
        self.isInferred = isInferred
        self.file = file
    }

    /// The entity mapping with this name.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }

    /// Whether this mapping leads from `source` to `destination`, by their version hashes.
    public func maps(from source: ManagedObjectModel, to destination: ManagedObjectModel) -> Bool {
        sourceEntityVersionHashes == source.entityVersionHashes
            && destinationEntityVersionHashes == destination.entityVersionHashes
    }

    /// The names of the policies the entity mappings run.
    public var policyNames: [String] {
        // Each once, in the order of its first mapping: several mappings may share one.
        var seen = Set<String>()
        return entityMappings.compactMap(\.policyName).filter { seen.insert($0).inserted }
    }
}
