extension MigrationManager {
    /// How each entity mapping of the mapping model runs: its instances and its
    /// relationships, as SQL or one by one and why.
    ///
    /// - Parameters:
    ///   - policies: the policies of the entity mappings, by mapping name (a mapping without
    ///     one runs one by one).
    ///   - dialect: the engine of both stores when the destination's connection can read
    ///     the source's tables; `nil` when it cannot, and no instances are created as SQL.
    ///   - sourceLayout: how the source store is laid out (its entities' numbers, its tables' names); by default as a
    ///     new store of the source model is.
    ///   - tracksIdentities: whether a mapping's source keys are small enough for identity
    ///     pairs (look-ups through its keys need them).
    func stages(
        policies: [String: EntityMigrationPolicy],
        dialect: (any SQLDialect)?,
        sourceLayout: StoreLayout? = nil,
        tracksIdentities: (String) -> Bool = { _ in true }
    )
        -> [String: (instances: InstanceStage?, relationships: RelationshipStage)]
    {
        var result: [String: (instances: InstanceStage?, relationships: RelationshipStage)] = [:]
        for mapping in mappingModel.entityMappings where mapping.type != .remove {
            guard let policy = policies[mapping.name] else {
                let reason = "its policy \(mapping.policyName ?? "") is not registered"
                result[mapping.name] = (mapping.sourceEntityName == nil ? nil : .perInstance(reason: reason), .perInstance(reason: reason))
                continue
            }
            let hooks = type(of: policy).overriddenHooks
            var relationships = RelationshipStage.plan(mapping, in: mappingModel, source: sourceModel, destination: destinationModel, hooks: hooks)
            // Key arithmetic needs the target's identity keys.
            if case .foreignKeys(let lookups) = relationships, let missing = lookups.first(where: { !tracksIdentities($0.targetMapping) }) {
                relationships = .perInstance(reason: "the keys of \(missing.targetMapping)'s source are too large to track as identity pairs")
            }
            var instances: InstanceStage?
            if mapping.type != .add, mapping.sourceEntityName != nil {
                if let dialect {
                    instances = InstanceStage.plan(
                        mapping,
                        source: sourceModel,
                        destination: destinationModel,
                        dialect: dialect,
                        sourceLayout: sourceLayout,
                        hooks: hooks,
                        associationCalls: needsAssociationCalls(for: mapping),
                        declared: declaredValues(of: mapping, policy: policy, hooks: hooks),
                        relationships: relationships
                    )
                } else {
                    instances = .perInstance(reason: "the destination store cannot read the source store's tables")
                }
            }
            result[mapping.name] = (instances, relationships)
        }
        return result
    }

    /// What the hooks of `mapping` that need its instances read and set, together, and who
    /// declared it; `nil` when one of them does not declare it (or none needs them).
    private func declaredValues(
        of mapping: EntityMapping,
        policy: EntityMigrationPolicy,
        hooks: EntityMigrationPolicy.Hooks
    ) -> (values: DeclaredValues, by: [String])? {
        var values = DeclaredValues(reads: [], sets: [])
        var by: [String] = []
        if hooks.contains(.createDestinationInstances) {
            guard let declared = type(of: policy).declaredValues else { return nil }
            values = values.union(declared)
            by.append(String(describing: type(of: policy)))
        }
        if needsAssociationCalls(for: mapping) {
            guard let declared = declaredAssociationValues(for: mapping) else { return nil }
            values = values.union(declared)
            by.append(String(describing: type(of: self)))
        }
        return by.isEmpty ? nil : (values, by)
    }

    /// The policy of each entity mapping, made from the registered ones; a mapping naming an
    /// unregistered policy has none.
    func registeredPolicies() -> [String: EntityMigrationPolicy] {
        var policies: [String: EntityMigrationPolicy] = [:]
        for mapping in mappingModel.entityMappings {
            if let name = mapping.policyName {
                policies[mapping.name] = configuration.policies.makePolicy(named: name)
            } else {
                policies[mapping.name] = EntityMigrationPolicy()
            }
        }
        return policies
    }

    /// ``stages(policies:dialect:tracksIdentities:)`` as the plan shows it.
    func entityMappingPlans(dialect: (any SQLDialect)?, sourceLayout: StoreLayout? = nil) -> [MigrationPlan.EntityMappingPlan] {
        let stages = stages(policies: registeredPolicies(), dialect: dialect, sourceLayout: sourceLayout)
        return mappingModel.entityMappings.compactMap { mapping in
            guard let stage = stages[mapping.name] else { return nil }
            let instances: MigrationPlan.EntityMappingPlan.Stage =
                switch stage.instances {
                case .sql?: .sql
                case .declared(let declared)?: .sqlWithDeclaredValues(declared.sets.map(\.attribute), by: declared.declaredBy)
                case .perInstance(let reason)?: .perInstance(reason: reason)
                case nil: .perInstance(reason: "it has no source instances")
                }
            let relationships: MigrationPlan.EntityMappingPlan.Stage =
                switch stage.relationships {
                case .foreignKeys: .sql
                case .perInstance(let reason): .perInstance(reason: reason)
                }
            return MigrationPlan.EntityMappingPlan(name: mapping.name, instances: instances, relationships: relationships)
        }
    }
}
