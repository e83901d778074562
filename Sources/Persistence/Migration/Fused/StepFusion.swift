import Logging

extension MigrationPlan {
    /// Whether a step runs in one pass with the step after it.
    ///
    /// Two consecutive streamed steps are *fused* when the objects the first one makes one
    /// by one can be handed to the second one's mapping in memory: each batch is read from
    /// the store once, goes through both steps' policies and hooks, and only the second
    /// step's objects are written. What the first step makes as SQL (pages copied with
    /// `INSERT … SELECT`) is still written to its own intermediate store, which the second
    /// step reads as SQL. Fusing changes no row of the result.
    ///
    /// ```swift
    /// let plan = try await migrator.plan(forStoreAt: url)
    /// for step in plan.steps { print(step.fusionWithNext.map(String.init(describing:)) ?? "last") }
    /// // "fused with the next step: Publication carried in memory"
    /// ```
    public enum Fusion: Sendable, Hashable, CustomStringConvertible {
        /// One pass with the next step, the listed entity mappings' objects handed over in memory.
        case fused(carried: [CarriedMapping])
        /// Step by step, because of `reason`.
        case notFused(reason: String)

        /// Whether the step runs in one pass with the next one.
        public var isFused: Bool {
            if case .fused = self { true } else { false }
        }

        public var description: String {
            switch self {
            case .fused(let carried):
                "fused with the next step: \(carried.map(\.entityName).joined(separator: ", ")) carried in memory"
            case .notFused(let reason):
                "not fused with the next step, because \(reason)"
            }
        }
    }

    /// An entity whose objects one step makes one by one and the next step's mapping
    /// takes from it in memory.
    public struct CarriedMapping: Sendable, Hashable {
        /// The first step's entity mapping, which makes the objects.
        public let upstream: String
        /// The next step's entity mapping, which migrates them.
        public let downstream: String
        /// Their entity, the first step's destination and the next step's source.
        public let entityName: String
    }
}

/// Works out whether two consecutive steps of a plan can run as one pass
/// (``MigrationPlan/Fusion``), and if not, says why.
struct StepFusion {
    let upstream: MigrationPlan.Step
    let downstream: MigrationPlan.Step
    let policies: MigrationPolicies
    let dialect: (any SQLDialect)?
    /// How the upstream step's source store numbers its entities, for its first step.
    let sourceNumbering: EntityNumbering?
    /// The migrator's logger, which the managers made to plan the steps' stages are given.
    let logger: Logger

    func fusion() -> MigrationPlan.Fusion {
        switch carried() {
        case .success(let carried): .fused(carried: carried)
        case .failure(let refusal): .notFused(reason: refusal.reason)
        }
    }

    struct Refusal: Error {
        let reason: String
    }

    private func carried() -> Result<[MigrationPlan.CarriedMapping], Refusal> {
        Result { try check() }.mapError { $0 as? Refusal ?? Refusal(reason: "\($0)") }
    }

    private func check() throws -> [MigrationPlan.CarriedMapping] {
        let (a, b) = (upstream, downstream)
        for step in [a, b] where step.strategy != .streamed {
            throw Refusal(reason: "\(step.source.name) → \(step.destination.name) runs \(step.strategy.rawValue) in SQL; only streamed steps are fused")
        }
        guard dialect != nil else { throw Refusal(reason: "an in-memory store is migrated step by step") }
        for step in [a, b] where step.mappingModels.count != 1 {
            throw Refusal(reason: "\(step.source.name) → \(step.destination.name) has \(step.mappingModels.count) mapping models, run one after the other")
        }
        for step in [a, b] where step.managerType.fetchesFromStores {
            throw Refusal(reason: "the migration manager \(String(describing: step.managerType)) may fetch from the stores (it does not say `fetchesFromStores` is false)")
        }
        let upstreamStages = try stages(of: a, sourceNumbering: sourceNumbering)
        let downstreamStages = try stages(of: b, sourceNumbering: nil)
        let mappingsA = a.mappingModels[0].entityMappings, mappingsB = b.mappingModels[0].entityMappings
        var carried: [MigrationPlan.CarriedMapping] = []
        for mapping in mappingsA {
            guard case .perInstance? = upstreamStages[mapping.name]?.instances else { continue }
            carried.append(try carry(mapping, into: mappingsB, stages: downstreamStages))
        }
        guard !carried.isEmpty else {
            throw Refusal(reason: "\(a.source.name) → \(a.destination.name) makes every instance in SQL: nothing to carry in memory")
        }
        // The next step takes them in the order they are handed over.
        let order = mappingsB.map(\.name).filter { name in carried.contains { $0.downstream == name } }
        guard order == carried.map(\.downstream) else {
            throw Refusal(reason: "\(b.source.name) → \(b.destination.name) migrates \(carried.map(\.entityName).joined(separator: ", ")) in another order than they are made")
        }
        return carried
    }

    /// How each entity mapping of `step` runs; every relationship must be key arithmetic,
    /// which needs no object of the intermediate version to be stored.
    private func stages(of step: MigrationPlan.Step, sourceNumbering: EntityNumbering?) throws -> [String: (instances: InstanceStage?, relationships: RelationshipStage)] {
        let manager = step.managerType.init(configuration: MigrationManager.Configuration(
            sourceModel: step.source, destinationModel: step.destination, mappingModel: step.mappingModels[0], policies: policies,
            logger: logger))
        let registered = manager.registeredPolicies()
        for mapping in step.mappingModels[0].entityMappings {
            guard let policy = registered[mapping.name] else {
                throw Refusal(reason: "the policy \(mapping.policyName ?? "") of \(mapping.name) is not registered")
            }
            if type(of: policy).fetchesFromStores {
                throw Refusal(reason: "the policy \(mapping.policyName ?? String(describing: type(of: policy))) of \(mapping.name) may fetch from the stores (it does not say `fetchesFromStores` is false)")
            }
        }
        let stages = manager.stages(policies: registered, dialect: dialect, sourceNumbering: sourceNumbering)
        for mapping in step.mappingModels[0].entityMappings {
            if case .perInstance(let reason)? = stages[mapping.name]?.relationships {
                throw Refusal(reason: "\(mapping.name) of \(step.source.name) → \(step.destination.name) sets its relationships one by one (\(reason))")
            }
        }
        return stages
    }

    /// What the downstream step does with the instances `mapping` makes one by one: one
    /// entity mapping of its takes them, one by one too, reading nothing of them but their
    /// attributes and to-one keys.
    private func carry(_ mapping: EntityMapping, into downstreamMappings: [EntityMapping],
                       stages: [String: (instances: InstanceStage?, relationships: RelationshipStage)]) throws -> MigrationPlan.CarriedMapping {
        let (a, b) = (upstream, downstream)
        guard let sourceName = mapping.sourceEntityName, let sourceEntity = a.source.entity(named: sourceName),
            let name = mapping.destinationEntityName, let entity = a.destination.entity(named: name)
        else { throw Refusal(reason: "\(mapping.name) does not map one source entity to one destination entity") }
        // Keys and counts are per table; a hierarchy shares its table with other mappings.
        for (model, described) in [(a.source, sourceEntity), (a.destination, entity)]
        where described.parentName != nil || !model.subentities(of: described).isEmpty {
            throw Refusal(reason: "\(described.name) in \(model.name) is part of an entity hierarchy")
        }
        let makers = a.mappingModels[0].entityMappings.filter { $0.destinationEntityName == name && $0.type != .remove }
        guard makers.count == 1 else { throw Refusal(reason: "several entity mappings of \(a.source.name) → \(a.destination.name) make \(name)") }
        for relationship in a.destination.relationships(of: entity) where relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0) {
            throw Refusal(reason: "\(name).\(relationship.name) in \(a.destination.name) has a count limit, which is checked on stored rows")
        }
        let readers = downstreamMappings.filter { $0.sourceEntityName == name && $0.type != .remove }
        guard readers.count == 1, let reader = readers.first else {
            throw Refusal(reason: "\(readers.isEmpty ? "no" : "more than one") entity mapping of \(b.source.name) → \(b.destination.name) migrates \(name)")
        }
        guard case .perInstance? = stages[reader.name]?.instances else {
            throw Refusal(reason: "\(reader.name) of \(b.source.name) → \(b.destination.name) migrates \(name) in SQL from its stored rows")
        }
        guard reader.sourceFilter == nil else { throw Refusal(reason: "\(reader.name) filters its source") }
        for attributeMapping in reader.attributeMappings {
            guard let expression = attributeMapping.valueExpression else { continue }
            if case .constant = expression { continue }
            guard let path = expression.sourceKeyPath, path.count == 1, b.source.attribute(named: path[0], of: entity) != nil else {
                throw Refusal(reason: "\(reader.name).\(attributeMapping.name)'s value expression may read more of \(name) than its attributes")
            }
        }
        return MigrationPlan.CarriedMapping(upstream: mapping.name, downstream: reader.name, entityName: name)
    }
}
