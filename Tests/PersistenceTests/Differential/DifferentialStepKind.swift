import Foundation

@testable import Persistence

/// The four ways a step runs, each made to run `Differential` → `Differential 2`:
///
/// - inferred in place: no mapping model; SQL renames `a0` and adds `note` inside the store;
/// - set-based: a mapping model whose `note` is a constant expression, run as
///   `INSERT … SELECT` into a new store;
/// - streamed with a policy: the same mapping model naming ``DifferentialNotePolicy``,
///   whose hook writes `note` instance by instance;
/// - streamed with a custom manager: ``DifferentialNoteManager``, whose `associate` does.
///
/// An in-memory store is not migrated with SQL: every kind streams there, through a
/// ``MigrationManager`` run directly.
enum DifferentialStepKind: String, CaseIterable, Sendable {
    case inferredInPlace = "inferred in place"
    case setBased = "set-based"
    case streamedWithPolicy = "streamed with a policy"
    case streamedWithManager = "streamed with a custom manager"

    /// How a SQL engine must run the step.
    var strategy: MigrationPlan.Strategy {
        switch self {
        case .inferredInPlace: .inPlace
        case .setBased: .setBased
        case .streamedWithPolicy, .streamedWithManager: .streamed
        }
    }

    /// The `note` the kind gives an item with `values`: computed here from the source
    /// values, independently of the framework.
    func note(forSourceValues values: [AttributeValue]) -> AttributeValue {
        switch self {
        case .inferredInPlace: .null
        case .setBased: .string("set-based")
        case .streamedWithPolicy: .string("policy \(values.filter { !$0.isNull }.count)")
        case .streamedWithManager: .string("manager \(values.filter { !$0.isNull }.count)")
        }
    }

    /// The mapping model the chain is given; none for the inferred step.
    func mappingModel(_ store: DifferentialStore) throws -> MappingModel? {
        guard self != .inferredInPlace else { return nil }
        return try explicitMapping(store)
    }

    /// The mapping model a ``MigrationManager`` runs: the inferred one for the inferred kind.
    func managerMapping(_ store: DifferentialStore) throws -> MappingModel {
        if self == .inferredInPlace { return try MappingModel.inferred(from: store.model(version: 1), to: store.model(version: 2)) }
        return try explicitMapping(store)
    }

    private func explicitMapping(_ store: DifferentialStore) throws -> MappingModel {
        var mapping = try MappingModel.inferred(from: store.model(version: 1), to: store.model(version: 2))
        mapping.isInferred = false
        mapping.name = "Differential1To2"
        guard let index = mapping.entityMappings.firstIndex(where: { $0.destinationEntityName == "Item" }) else {
            preconditionFailure("the inferred mapping has no entity mapping into Item")
        }
        switch self {
        case .setBased:
            mapping.entityMappings[index].attributeMappings.removeAll { $0.name == "note" }
            mapping.entityMappings[index].attributeMappings.append(
                PropertyMapping(name: "note", valueExpression: try Expression(format: #""set-based""#))
            )
        case .streamedWithPolicy:
            mapping.entityMappings[index].policyName = "DifferentialNotePolicy"
        case .inferredInPlace, .streamedWithManager:
            break
        }
        return mapping
    }

    var policies: MigrationPolicies {
        var policies = MigrationPolicies()
        policies.register(DifferentialNotePolicy.self)
        return policies
    }

    var managerType: MigrationManager.Type {
        self == .streamedWithManager ? DifferentialNoteManager.self : MigrationManager.self
    }

    /// The chain that takes a `Differential` store to `Differential 2` this way.
    func chain(_ store: DifferentialStore) throws -> MigrationChain {
        let models = try store.versions()
        let mappings = try mappingModel(store).map { [$0] } ?? []
        if self == .streamedWithManager {
            return try MigrationChain(DifferentialManagedVersion.self, models: models, mappingModels: mappings, policies: policies)
        }
        return try MigrationChain(DifferentialVersion.self, models: models, mappingModels: mappings, policies: policies)
    }

    /// The number of attributes of `source` that hold a value, as the notes count them.
    static func valueCount(of source: ManagedObject, attributes: Int) -> Int {
        (0..<attributes).filter { !source.value(forKey: "a\($0)").isNull }.count
    }
}

enum DifferentialVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Differential"
    case v2 = "Differential 2"
    var modelName: String { rawValue }
    func nextVersion() -> DifferentialVersion? { self == .v1 ? .v2 : nil }
}

enum DifferentialManagedVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Differential"
    case v2 = "Differential 2"
    var modelName: String { rawValue }
    func nextVersion() -> DifferentialManagedVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? DifferentialNoteManager.self : MigrationManager.self }
}

/// Writes an item's `note` after the default instance is made: "policy N", N its source's
/// attributes that hold a value.
final class DifferentialNotePolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let attributes = manager.sourceModel.entity(named: "Item")?.attributes.count ?? 0
        for destination in try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source]) {
            destination.setValue(.string("policy \(DifferentialStepKind.valueCount(of: source, attributes: attributes))"), forKey: "note")
        }
    }
}

/// Writes an item's `note` as each pair is associated: "manager N", as the policy does.
final class DifferentialNoteManager: MigrationManager, @unchecked Sendable {
    override func associate(sourceInstance: ManagedObject, withDestinationInstance destination: ManagedObject, for mapping: EntityMapping) {
        super.associate(sourceInstance: sourceInstance, withDestinationInstance: destination, for: mapping)
        guard mapping.destinationEntityName == "Item" else { return }
        let attributes = sourceModel.entity(named: "Item")?.attributes.count ?? 0
        destination.setValue(.string("manager \(DifferentialStepKind.valueCount(of: sourceInstance, attributes: attributes))"), forKey: "note")
    }
}
