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
    /// The mapping models of the step *into* this version, by ``MappingModel/name``, in the
    /// order they run: Core Data's multiple passes, e.g. users and authors first, then the
    /// books whose policy links to them. Empty by default: the step's mapping models run in
    /// the order the chain was given them.
    ///
    /// ```swift
    /// var mappingModelNames: [String] {
    ///     self == .v3 ? ["Books2To3Users", "Books2To3Books"] : []
    /// }
    /// ```
    var mappingModelNames: [String] { get }
}

extension MigrationVersion {
    /// ``MigrationManager``: the step into this version runs the standard manager.
    public var migrationManagerType: MigrationManager.Type { MigrationManager.self }
    /// None: the step's mapping models run in the order the chain was given them.
    public var mappingModelNames: [String] { [] }
}

/// Everything a migration needs: the model versions, the way between them, the mapping
/// models and the policies they name.
///
/// The way is the app's where it gives one (a ``MigrationVersion`` whose cases name the
/// version each migrates to next: a progressive migration); without one it is Core Data's,
/// which has no order of versions: straight from the store's version to the target.
///
/// ```swift
/// // The app's progressive chain.
/// let chain = try MigrationChain(BookStoreVersion.self, models: models,
///                                mappingModels: MappingModel.load(directory: mappingsURL, versions: models),
///                                policies: policies)
/// // Core Data's way: one step to the current version, by the mapping model that maps it or inferred.
/// let straight = MigrationChain(models: models, mappingModels: mappings)
/// ```
public struct MigrationChain: Sendable {
    /// The model versions, from the `.xcdatamodeld` or `.momd`.
    public let models: VersionedModel
    /// The mapping models the steps may use, found by the entity version hashes they map.
    public let mappingModels: [MappingModel]
    /// The entity migration policies the mapping models name, by their registered names.
    public let policies: MigrationPolicies
    /// How a store's steps are found.
    public let route: Route
    /// Model name → the model name its stores migrate to next; empty for a chain without
    /// an order of versions (``Route/straight``).
    public var next: [String: String] {
        if case .versions(let next) = route { next } else { [:] }
    }
    /// Destination model name → the manager that runs the step into it.
    let managers: [String: MigrationManager.Type]
    /// Destination model name → the names of the step's mapping models, in order, where the
    /// versions name them (``MigrationVersion/mappingModelNames``).
    let mappingOrder: [String: [String]]

    /// A chain over the cases of `versions`; every case must name a version in `models`.
    ///
    /// - Throws: ``MigrationError/Code/noPath`` naming a case whose model is missing.
    public init<Version: MigrationVersion>(
        _ versions: Version.Type,
        models: VersionedModel,
        mappingModels: [MappingModel] = [],
        policies: MigrationPolicies = MigrationPolicies()
    ) throws(MigrationError) {
        var next: [String: String] = [:]
        var managers: [String: MigrationManager.Type] = [:]
        var mappingOrder: [String: [String]] = [:]
        for version in Version.allCases {
            guard models.version(named: version.modelName) != nil else {
                throw MigrationError(
                    .noPath,
                    "the version chain names '\(version.modelName)', which \(models.name) does not have",
                    hint: "known versions: \(models.versions.map(\.name).joined(separator: ", "))"
                )
            }
            if let successor = version.nextVersion() { next[version.modelName] = successor.modelName }
            managers[version.modelName] = version.migrationManagerType
            if !version.mappingModelNames.isEmpty { mappingOrder[version.modelName] = version.mappingModelNames }
        }
        self.models = models
        self.mappingModels = mappingModels
        self.policies = policies
        self.route = .versions(next: next)
        self.managers = managers
        self.mappingOrder = mappingOrder
    }

    /// Core Data's way, for models that only have the `.xcdatamodeld` folder and mapping
    /// files (such as the `persistence` command's): no order of versions. A store migrates
    /// straight from its version (found by its hashes) to the target, by the mapping models
    /// that map those two or inferred; where no mapping model maps them but the mapping
    /// models lead from one to the other (`v1 to v2`, `v2 to v3`, …), through those.
    /// Every step is run by ``MigrationManager``.
    ///
    /// ```swift
    /// let chain = MigrationChain(models: models, mappingModels: try MappingModel.load(directory: mappings, versions: models))
    /// ```
    public init(models: VersionedModel, mappingModels: [MappingModel] = [], policies: MigrationPolicies = MigrationPolicies()) {
        self.models = models
        self.mappingModels = mappingModels
        self.policies = policies
        self.route = .straight
        self.managers = Dictionary(uniqueKeysWithValues: models.versions.map { ($0.name, MigrationManager.self) })
        self.mappingOrder = [:]
    }

    /// A progressive chain through `versions` in their order, each step run by
    /// ``MigrationManager``: the app's order of versions, for models that only have the
    /// `.xcdatamodeld` folder and mapping files (`persistence migrate --chain`).
    ///
    /// ```swift
    /// let chain = try MigrationChain(models: models, through: ["App 1", "App 2", "App 10"])
    /// ```
    ///
    /// - Throws: ``MigrationError/Code/noPath`` naming a version `models` does not have, or
    ///   one named twice.
    public init(
        models: VersionedModel,
        through versions: [String],
        mappingModels: [MappingModel] = [],
        policies: MigrationPolicies = MigrationPolicies()
    ) throws(MigrationError) {
        var names: [String] = []
        for text in versions {
            guard let model = models.version(namedOrNumbered: text) else {
                throw MigrationError(
                    .noPath,
                    "the version chain names '\(text)', which \(models.name) does not have",
                    hint: "known versions: \(models.versions.map(\.name).joined(separator: ", "))"
                )
            }
            guard !names.contains(model.name) else {
                throw MigrationError(
                    .noPath,
                    "the version chain names '\(model.name)' twice",
                    hint: "name each version once, in the order the app shipped them"
                )
            }
            names.append(model.name)
        }
        self.models = models
        self.mappingModels = mappingModels
        self.policies = policies
        self.route = .versions(next: Dictionary(uniqueKeysWithValues: zip(names, names.dropFirst()).map { ($0, $1) }))
        self.managers = Dictionary(uniqueKeysWithValues: models.versions.map { ($0.name, MigrationManager.self) })
        self.mappingOrder = [:]
    }

    /// The mapping models for a step, found by the two models' version hashes as Core Data
    /// finds them, in the order the destination version names them, else in the order the
    /// chain was given them (never by their names); an inferred one when there is none.
    ///
    /// - Throws: ``MigrationError/Code/invalidMappingModel`` when the version names a mapping
    ///   model that does not map the step, or leaves out one that does.
    func mappingModels(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws(MigrationError) -> [MappingModel] {
        let found = mappingModels.filter { $0.maps(from: source, to: destination) }
        guard let names = mappingOrder[destination.name] else {
            return found.isEmpty ? [try MappingModel.inferred(from: source, to: destination)] : found
        }
        let step = "\(source.name) → \(destination.name)"
        var ordered: [MappingModel] = []
        for name in names {
            guard let mapping = found.first(where: { $0.name == name }) else {
                let available =
                    found.isEmpty
                    ? "none of the chain's mapping models maps it" : "the ones that map it: \(found.map(\.name).joined(separator: ", "))"
                throw MigrationError(
                    .invalidMappingModel,
                    "the version \(destination.name) names the mapping model '\(name)' for the step \(step), but no mapping model of that name maps it",
                    hint: "correct mappingModelNames of \(destination.name), or give the chain that mapping model (\(available))"
                )
            }
            ordered.append(mapping)
        }
        if let left = found.first(where: { !names.contains($0.name) }) {
            throw MigrationError(
                .invalidMappingModel,
                "the mapping model '\(left.name)' maps the step \(step), but mappingModelNames of \(destination.name) leaves it out",
                hint: "name it in mappingModelNames where it should run, or leave it out of the chain",
                file: left.file
            )
        }
        return ordered
    }
}
