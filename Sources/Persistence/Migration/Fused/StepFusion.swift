import Logging

/// Works out whether two consecutive steps of a plan can run as one pass
/// (``MigrationPlan/Fusion``), and if not, says why.
struct StepFusion {
    let upstream: MigrationPlan.Step
    let downstream: MigrationPlan.Step
    let policies: MigrationPolicies
    let dialect: (any SQLDialect)?
    /// How the upstream step's source store is laid out (numbers and names), for its first step.
    let sourceLayout: StoreLayout?
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
            throw Refusal(
                reason: "\(step.source.name) → \(step.destination.name) runs \(step.strategy.rawValue) in SQL; only streamed steps are fused"
            )
        }
        guard dialect != nil else { throw Refusal(reason: "an in-memory store is migrated step by step") }
        for step in [a, b] where step.mappingModels.count != 1 {
            throw Refusal(
                reason: "\(step.source.name) → \(step.destination.name) has \(step.mappingModels.count) mapping models, run one after the other"
            )
        }
        for step in [a, b] where step.managerType.fetchesFromStores {
            throw Refusal(
                reason:
                    "the migration manager \(String(describing: step.managerType)) may fetch from the stores (it does not say `fetchesFromStores` is false)"
            )
        }
        let upstreamStages = try stages(of: a, sourceLayout: sourceLayout)
        let downstreamStages = try stages(of: b, sourceLayout: nil)
        let mappingsA = a.mappingModels[0].entityMappings
        let mappingsB = b.mappingModels[0].entityMappings
        var carried: [MigrationPlan.CarriedMapping] = []
        for mapping in mappingsA {
            guard case .perInstance? = upstreamStages[mapping.name]?.instances else { continue }
            carried.append(try carry(mapping, into: mappingsB, stages: downstreamStages))
        }
        guard !carried.isEmpty else {
            throw Refusal(reason: "\(a.source.name) → \(a.destination.name) makes every instance in SQL: nothing to carry in memory")
        }
        try checkIntermediateRules(carrying: Set(carried.map(\.entityName)))
        try checkReads(of: Set(carried.map(\.entityName)), by: mappingsB)
        // The next step takes them in the order they are handed over.
        let order = mappingsB.map(\.name).filter { name in carried.contains { $0.downstream == name } }
        guard order == carried.map(\.downstream) else {
            throw Refusal(
                reason:
                    "\(b.source.name) → \(b.destination.name) migrates \(carried.map(\.entityName).joined(separator: ", ")) in another order than they are made"
            )
        }
        return carried
    }

    /// How each entity mapping of `step` runs; every relationship must be key arithmetic,
    /// which needs no object of the intermediate version to be stored.
    private func stages(
        of step: MigrationPlan.Step,
        sourceLayout: StoreLayout?
    ) throws -> [String: (instances: InstanceStage?, relationships: RelationshipStage)] {
        let manager = step.managerType.init(
            configuration: MigrationManager.Configuration(
                sourceModel: step.source,
                destinationModel: step.destination,
                mappingModel: step.mappingModels[0],
                policies: policies,
                logger: logger
            )
        )
        let registered = manager.registeredPolicies()
        for mapping in step.mappingModels[0].entityMappings {
            guard let policy = registered[mapping.name] else {
                throw Refusal(reason: "the policy \(mapping.policyName ?? "") of \(mapping.name) is not registered")
            }
            if type(of: policy).fetchesFromStores {
                throw Refusal(
                    reason:
                        "the policy \(mapping.policyName ?? String(describing: type(of: policy))) of \(mapping.name) may fetch from the stores (it does not say `fetchesFromStores` is false)"
                )
            }
        }
        let stages = manager.stages(policies: registered, dialect: dialect, sourceLayout: sourceLayout)
        for mapping in step.mappingModels[0].entityMappings {
            if case .perInstance(let reason)? = stages[mapping.name]?.relationships {
                throw Refusal(
                    reason: "\(mapping.name) of \(step.source.name) → \(step.destination.name) sets its relationships one by one (\(reason))"
                )
            }
        }
        return stages
    }

    /// What the downstream step does with the instances `mapping` makes one by one: one
    /// entity mapping of its takes them, one by one too, reading nothing of them but their
    /// attributes and to-one keys.
    private func carry(
        _ mapping: EntityMapping,
        into downstreamMappings: [EntityMapping],
        stages: [String: (instances: InstanceStage?, relationships: RelationshipStage)]
    ) throws -> MigrationPlan.CarriedMapping {
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
        // Every source row must give its one destination; a filter leaves some out.
        guard mapping.sourceFilter == nil else { throw Refusal(reason: "\(mapping.name) filters its source") }
        let readers = downstreamMappings.filter { $0.sourceEntityName == name && $0.type != .remove }
        guard readers.count == 1, let reader = readers.first else {
            throw Refusal(
                reason: "\(readers.isEmpty ? "no" : "more than one") entity mapping of \(b.source.name) → \(b.destination.name) migrates \(name)"
            )
        }
        guard case .perInstance? = stages[reader.name]?.instances else {
            throw Refusal(reason: "\(reader.name) of \(b.source.name) → \(b.destination.name) migrates \(name) in SQL from its stored rows")
        }
        guard reader.sourceFilter == nil else { throw Refusal(reason: "\(reader.name) filters its source") }
        // In memory, a carried object holds its attributes and to-one keys, nothing more.
        for attributeMapping in reader.attributeMappings {
            guard let expression = attributeMapping.valueExpression else { continue }
            guard Self.readsOwnAttributesOnly(expression, of: entity, in: b.source) else {
                throw Refusal(
                    reason: "\(reader.name).\(attributeMapping.name)'s value expression may read more of \(name) than its stored attributes"
                )
            }
        }
        if dialect?.storesFloatsAndDatesRounded == true { try checkRounding(of: entity, by: reader) }
        return MigrationPlan.CarriedMapping(upstream: mapping.name, downstream: reader.name, entityName: name)
    }

    /// Where the engine stores a Float or a Date rounded (PostgreSQL: `real`, microseconds), a value read back
    /// from the intermediate store is rounded, a carried one is not. Copied into an
    /// attribute of the same type, it is rounded alike when the next step stores it; read
    /// into anything else, it would differ.
    private func checkRounding(of entity: EntityDescription, by reader: EntityMapping) throws {
        let (model, destination) = (downstream.source, downstream.destination)
        let destinationEntity = reader.destinationEntityName.flatMap { destination.entity(named: $0) }
        for attributeMapping in reader.attributeMappings {
            guard let expression = attributeMapping.valueExpression else { continue }
            let rounded = Self.sourceAttributeNames(in: expression).compactMap { model.attribute(named: $0, of: entity) }
                .filter { $0.type == .float || $0.type == .date }
            guard let attribute = rounded.first else { continue }
            let target = destinationEntity.flatMap { destination.attribute(named: attributeMapping.name, of: $0) }
            if expression.sourceKeyPath == [attribute.name], target?.type == attribute.type { continue }
            throw Refusal(
                reason:
                    "\(reader.name).\(attributeMapping.name) reads \(entity.name).\(attribute.name), a \(attribute.type.rawValue) that PostgreSQL stores rounded, into a value of another kind"
            )
        }
    }

    /// The names `$source.<name>` reads in `expression`.
    private static func sourceAttributeNames(in expression: Expression) -> [String] {
        switch expression {
        case .variable("source", let path): path.prefix(1).map { $0 }
        case .arithmetic(_, let left, let right): sourceAttributeNames(in: left) + sourceAttributeNames(in: right)
        case .function(_, let arguments), .aggregate(let arguments): arguments.flatMap(sourceAttributeNames)
        default: []
        }
    }

    /// Whether `expression` reads nothing of `$source` (an `entity`) but its stored
    /// attributes: constants, `$source.<attribute>`, and arithmetic and functions of them.
    private static func readsOwnAttributesOnly(_ expression: Expression, of entity: EntityDescription, in model: ManagedObjectModel) -> Bool {
        switch expression {
        case .constant:
            return true
        case .variable("source", let path):
            guard path.count == 1, let attribute = model.attribute(named: path[0], of: entity) else { return false }
            return !attribute.isTransient
        case .arithmetic(_, let left, let right):
            return readsOwnAttributesOnly(left, of: entity, in: model) && readsOwnAttributesOnly(right, of: entity, in: model)
        case .function(_, let arguments), .aggregate(let arguments):
            return arguments.allSatisfy { readsOwnAttributesOnly($0, of: entity, in: model) }
        default:
            // Key paths of the evaluated object, other variables, calls on the manager.
            return false
        }
    }

    /// The intermediate version's rules that are checked on stored rows only: the carried
    /// objects are never stored, and an intermediate store that the next step reads as it
    /// is written does not get its unique indexes.
    private func checkIntermediateRules(carrying carried: Set<String>) throws {
        let model = upstream.destination
        if let constrained = model.entities.first(where: { !$0.uniquenessConstraints.isEmpty }) {
            throw Refusal(reason: "\(constrained.name) in \(model.name) has uniqueness constraints, checked on stored rows")
        }
        for entity in model.entities {
            for relationship in model.relationships(of: entity)
            where relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0)
                && (carried.contains(entity.name) || carried.contains(relationship.destinationEntityName))
            {
                throw Refusal(reason: "\(entity.name).\(relationship.name) in \(model.name) has a count limit, checked on stored rows")
            }
        }
    }

    /// The next step's other mappings read stored rows of the intermediate version, where
    /// carried objects are not: none may reach one through a relationship or a filter.
    private func checkReads(of carried: Set<String>, by mappings: [EntityMapping]) throws {
        let model = downstream.source
        for mapping in mappings where !carried.contains(mapping.sourceEntityName ?? "") {
            guard let sourceName = mapping.sourceEntityName, let entity = model.entity(named: sourceName) else { continue }
            let reachesCarried = model.relationships(of: entity).contains { carried.contains($0.destinationEntityName) }
            guard reachesCarried else { continue }
            if mapping.sourceFilter != nil {
                throw Refusal(reason: "\(mapping.name) filters \(sourceName), which reaches carried objects through its relationships")
            }
            for attributeMapping in mapping.attributeMappings {
                guard let expression = attributeMapping.valueExpression, !Self.readsOwnAttributesOnly(expression, of: entity, in: model) else {
                    continue
                }
                throw Refusal(
                    reason:
                        "\(mapping.name).\(attributeMapping.name)'s value expression may read carried objects through \(sourceName)'s relationships"
                )
            }
        }
    }
}
