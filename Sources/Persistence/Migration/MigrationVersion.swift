/// A released model version and the one a store of it migrates to next: the
/// progressive-migration article's `CoreDataMigrationVersion`.
///
/// `nextVersion()` may skip a broken version or jump several legacy versions in one step;
/// the step then needs a mapping model (found by version hashes) or must be inferable.
///
/// ```swift
/// enum BookStoreVersion: String, MigrationVersion, CaseIterable {
///     case v1 = "BookStore", v2 = "BookStore 2", v3 = "BookStore 3"
///     var modelName: String { rawValue }
///     func nextVersion() -> BookStoreVersion? {
///         switch self { case .v1: .v2; case .v2: .v3; case .v3: nil }
///     }
/// }
/// ```
public protocol MigrationVersion: Hashable, Sendable, CaseIterable {
    /// The model version's name in the `.xcdatamodeld` (`BookStore 2`).
    var modelName: String { get }
    /// The version a store of this version migrates to, or `nil` for the current one.
    func nextVersion() -> Self?
    /// The manager that runs the step *into* this version; ``MigrationManager`` by default.
    var migrationManagerType: MigrationManager.Type { get }
}

extension MigrationVersion {
    public var migrationManagerType: MigrationManager.Type { MigrationManager.self }
}

/// Everything a progressive migration needs: the model versions, the chain between them,
/// the mapping models and the policies they name.
///
/// ```swift
/// let chain = try MigrationChain(BookStoreVersion.self, models: models,
///                                mappingModels: MappingModel.load(directory: mappingsURL, versions: models),
///                                policies: policies)
/// ```
public struct MigrationChain: Sendable {
    public let models: VersionedModel
    public let mappingModels: [MappingModel]
    public let policies: MigrationPolicies
    /// Model name → the model name its stores migrate to next.
    public let next: [String: String]
    /// Destination model name → the manager that runs the step into it.
    let managers: [String: MigrationManager.Type]

    /// A chain over the cases of `versions`; every case must name a version in `models`.
    ///
    /// - Throws: ``MigrationError/Code/noPath`` naming a case whose model is missing.
    public init<Version: MigrationVersion>(_ versions: Version.Type, models: VersionedModel, mappingModels: [MappingModel] = [],
                                           policies: MigrationPolicies = MigrationPolicies()) throws(MigrationError) {
        var next: [String: String] = [:]
        var managers: [String: MigrationManager.Type] = [:]
        for version in Version.allCases {
            guard models.version(named: version.modelName) != nil else {
                throw MigrationError(.noPath, "the version chain names '\(version.modelName)', which \(models.name) does not have",
                                     hint: "known versions: \(models.versions.map(\.name).joined(separator: ", "))")
            }
            if let successor = version.nextVersion() { next[version.modelName] = successor.modelName }
            managers[version.modelName] = version.migrationManagerType
        }
        self.models = models
        self.mappingModels = mappingModels
        self.policies = policies
        self.next = next
        self.managers = managers
    }

    /// A chain through every version of `models` in order (`Model` → `Model 2` → …), each
    /// step run by ``MigrationManager``: for models that only have the `.xcdatamodeld`
    /// folder and mapping files, such as the `persistence` command's.
    ///
    /// ```swift
    /// let chain = MigrationChain(models: models, mappingModels: try MappingModel.load(directory: mappings, versions: models))
    /// ```
    public init(models: VersionedModel, mappingModels: [MappingModel] = [], policies: MigrationPolicies = MigrationPolicies()) {
        var next: [String: String] = [:]
        var managers: [String: MigrationManager.Type] = [:]
        for (index, version) in models.versions.enumerated() {
            if index + 1 < models.versions.count { next[version.name] = models.versions[index + 1].name }
            managers[version.name] = MigrationManager.self
        }
        self.models = models
        self.mappingModels = mappingModels
        self.policies = policies
        self.next = next
        self.managers = managers
    }

    /// The mapping models for a step, by the two models' version hashes (in name order, to
    /// run one after the other), or an inferred one when there is none.
    func mappingModels(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws(MigrationError) -> [MappingModel] {
        let found = mappingModels.filter { $0.maps(from: source, to: destination) }.sorted { $0.name < $1.name }
        if !found.isEmpty { return found }
        return [try MappingModel.inferred(from: source, to: destination)]
    }
}
