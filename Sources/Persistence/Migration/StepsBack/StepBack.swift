import Logging

/// The inverse of a step forward, `older` → `newer`, inferred: what a step back from
/// `newer` to `older` runs when no mapping model maps it.
///
/// A step back is inferred only when the step forward *only added or renamed*: every
/// entity of `older` continues in `newer`, each of their properties either continues
/// (by name or renaming identifier, as inference pairs them) unchanged or was dropped
/// unread, and whatever the step forward ran — its mapping models' value expressions, its
/// policies, its migration manager — set nothing but what `newer` added, from nothing
/// `newer` dropped. The step back then carries every value back under its older name and
/// drops what `newer` added (a data loss the caller must accept: ``DataLossWarning``).
///
/// Anything else has no inverse to infer — a policy that splits a value, an expression that
/// converts one, an entity removed — and the step back needs a mapping model from `newer`
/// to `older` (found by version hashes, as every mapping model is).
struct StepBack {
    let older: ManagedObjectModel
    let newer: ManagedObjectModel
    /// The step forward's mapping models, as the chain runs them (inferred when it has none).
    let forwardMappings: [MappingModel]
    /// The step forward's manager, and the policies its mapping models name.
    let forwardManager: MigrationManager.Type
    let policies: MigrationPolicies
    let logger: Logger

    /// The mapping model of the step back, `newer` → `older`.
    ///
    /// - Throws: ``MigrationError/Code/irreversibleStep`` naming what the step forward did
    ///   that has no inverse.
    func inferredMapping() throws(MigrationError) -> MappingModel {
        let forward: MappingModel
        do {
            forward = try MappingModel.inferred(from: older, to: newer)
        } catch {
            throw irreversible(because: "the changes cannot be inferred (\(error.message))")
        }
        try checkRunsNothingIrreversible(inferred: forward)
        var mappings: [EntityMapping] = []
        // Newer entity name → the older entity it continues.
        let olderEntity = Dictionary(
            forward.entityMappings.compactMap { mapping in mapping.destinationEntityName.flatMap { d in mapping.sourceEntityName.map { (d, $0) } } },
            uniquingKeysWith: { first, _ in first }
        )
        for mapping in forward.entityMappings {
            switch (mapping.sourceEntityName, mapping.destinationEntityName) {
            case (let olderName?, nil):
                // A store of the newer version has no rows of it: the step back makes it again, empty.
                mappings.append(
                    EntityMapping(
                        name: MappingModel.mappingName(source: nil, destination: olderName),
                        type: .add,
                        sourceEntityName: nil,
                        destinationEntityName: olderName
                    )
                )
            case (nil, let newerName?):
                mappings.append(
                    EntityMapping(
                        name: MappingModel.mappingName(source: newerName, destination: nil),
                        type: .remove,
                        sourceEntityName: newerName,
                        destinationEntityName: nil
                    )
                )
            case (let olderName?, let newerName?):
                mappings.append(try entityMapping(back: mapping, from: newerName, to: olderName, olderEntity: olderEntity))
            case (nil, nil):
                continue
            }
        }
        return MappingModel(
            name: "\(newer.name) to \(older.name) (inferred, the inverse of \(older.name) → \(newer.name))",
            source: newer,
            destination: older,
            entityMappings: mappings,
            isInferred: true
        )
    }

    /// The entity mapping that carries `newerName`'s rows back into `olderName`, from the
    /// inferred mapping forward between them.
    private func entityMapping(
        back forward: EntityMapping,
        from newerName: String,
        to olderName: String,
        olderEntity: [String: String]
    ) throws(MigrationError) -> EntityMapping {
        guard let olderDescription = older.entity(named: olderName), let newerDescription = newer.entity(named: newerName) else {
            throw irreversible(because: "\(olderName) is mapped to \(newerName), which the models do not both have")
        }
        var attributes: [PropertyMapping] = []
        for attribute in older.attributes(of: olderDescription) where !attribute.isTransient {
            if let counterpart = try counterpart(of: attribute.name, of: olderName, in: forward.attributeMappings, newerEntity: newerName) {
                // Only a value kept as it was comes back as it was: a Boolean become a number,
                // a Float become a Double would not.
                if let newerType = newer.attribute(named: counterpart, of: newerDescription)?.type, newerType != attribute.type {
                    throw irreversible(
                        because:
                            "\(olderName).\(attribute.name) changes type from \(attribute.type.rawValue) to \(newerType.rawValue) (as \(newerName).\(counterpart)): a step back could not give every value back as it was"
                    )
                }
                attributes.append(PropertyMapping(name: attribute.name, valueExpression: .variable("source", keyPath: [counterpart])))
            } else if !attribute.isOptional && attribute.defaultValue == nil {
                throw irreversible(
                    because: "\(olderName).\(attribute.name) is dropped, which '\(older.name)' requires and a step back has no value for"
                )
            } else {
                attributes.append(PropertyMapping(name: attribute.name))
            }
        }
        var relationships: [PropertyMapping] = []
        for relationship in older.relationships(of: olderDescription) where !relationship.isTransient {
            guard let counterpart = try counterpart(of: relationship.name, of: olderName, in: forward.relationshipMappings, newerEntity: newerName),
                let newerRelationship = newer.relationship(named: counterpart, of: newerDescription)
            else {
                if !relationship.isOptional && !(relationship.isToMany && relationship.minCount == 0) {
                    throw irreversible(
                        because: "\(olderName).\(relationship.name) is dropped, which '\(older.name)' requires and a step back has no objects for"
                    )
                }
                relationships.append(PropertyMapping(name: relationship.name))
                continue
            }
            // The rows it links at the newer version must fit the older destination, as inference checks forward.
            guard let target = olderEntity[newerRelationship.destinationEntityName], let targetEntity = older.entity(named: target),
                let expected = older.entity(named: relationship.destinationEntityName), older.entity(targetEntity, isKindOf: expected)
            else {
                throw irreversible(
                    because:
                        "\(olderName).\(relationship.name) (as \(newerName).\(counterpart)) comes to lead to \(newerRelationship.destinationEntityName), whose rows do not all fit \(relationship.destinationEntityName), where it leads in '\(older.name)'"
                )
            }
            let mappingName = MappingModel.mappingName(source: newerRelationship.destinationEntityName, destination: target)
            relationships.append(
                PropertyMapping(
                    name: relationship.name,
                    valueExpression: .destinationInstances(
                        forEntityMappingNamed: mappingName,
                        sourceInstances: .variable("source", keyPath: [counterpart])
                    )
                )
            )
        }
        let unchanged = newer.versionHash(of: newerDescription) == older.versionHash(of: olderDescription) && newerName == olderName
        return EntityMapping(
            name: MappingModel.mappingName(source: newerName, destination: olderName),
            type: unchanged ? .copy : .transform,
            sourceEntityName: newerName,
            destinationEntityName: olderName,
            attributeMappings: attributes,
            relationshipMappings: relationships
        )
    }

    /// The newer property an inferred mapping forward fills from the older `name` of
    /// `olderEntity`. Inference may fill several from one (a property renamed that kept its
    /// renaming identifier, beside a new one of the old name): the one of the same name
    /// carries it back; without one, which does is not known.
    private func counterpart(
        of name: String,
        of olderEntity: String,
        in mappings: [PropertyMapping],
        newerEntity: String
    ) throws(MigrationError) -> String? {
        let candidates = mappings.filter { $0.valueExpression?.sourceKeysRead == [name] }.map(\.name)
        guard candidates.count > 1 else { return candidates.first }
        if candidates.contains(name) { return name }
        throw irreversible(
            because:
                "\(candidates.map { "\(newerEntity).\($0)" }.joined(separator: " and ")) each continue \(olderEntity).\(name) (by name or renaming identifier): which one carries its values back is not known"
        )
    }

    /// Refuses a step forward whose mapping models, policies or manager did more than
    /// inference does: set a property `older` had, or read one `newer` dropped.
    private func checkRunsNothingIrreversible(inferred: MappingModel) throws(MigrationError) {
        let given = forwardMappings.filter { !$0.isInferred }
        for mapping in given {
            for entityMapping in mapping.entityMappings {
                try check(entityMapping, of: mapping, against: inferred)
            }
        }
        guard forwardManager != MigrationManager.self else { return }
        let manager = String(describing: forwardManager)
        for mapping in forwardMappings {
            let instance = forwardManager.init(
                configuration: MigrationManager.Configuration(
                    sourceModel: older,
                    destinationModel: newer,
                    mappingModel: mapping,
                    policies: policies,
                    logger: logger
                )
            )
            for entityMapping in mapping.entityMappings where entityMapping.type != .remove && instance.needsAssociationCalls(for: entityMapping) {
                guard let declared = instance.declaredAssociationValues(for: entityMapping) else {
                    throw irreversible(
                        because:
                            "the migration manager \(manager) runs Swift on each instance of \(entityMapping.name) without declaring what it reads and sets (declaredAssociationValues)"
                    )
                }
                try checkSets(declared.sets, reads: declared.reads, by: "the migration manager \(manager)", in: entityMapping, against: inferred)
            }
        }
    }

    /// One entity mapping of a given mapping model forward.
    private func check(_ entityMapping: EntityMapping, of mapping: MappingModel, against inferred: MappingModel) throws(MigrationError) {
        guard let olderName = entityMapping.sourceEntityName, let newerName = entityMapping.destinationEntityName, entityMapping.type != .remove
        else { return }
        guard inferred.entityMappings.contains(where: { $0.sourceEntityName == olderName && $0.destinationEntityName == newerName }) else {
            throw irreversible(
                because:
                    "the mapping model \(mapping.name) maps \(olderName) to \(newerName), which the versions' names and renaming identifiers do not pair"
            )
        }
        if let policyName = entityMapping.policyName {
            guard let policy = policies.makePolicy(named: policyName) else {
                throw irreversible(
                    because:
                        "\(entityMapping.name) runs the policy \(policyName), which is not registered here: what its Swift does cannot be seen (run the migration back from the app that registers it)"
                )
            }
            let type = type(of: policy)
            guard type.overriddenHooks.isSubset(of: [.createDestinationInstances]), let declared = type.declaredValues else {
                throw irreversible(
                    because:
                        "\(entityMapping.name) runs the policy \(policyName), Swift that does not declare what it reads and sets (declaredValues)"
                )
            }
            try checkSets(declared.sets, reads: declared.reads, by: "the policy \(policyName)", in: entityMapping, against: inferred)
        }
        for property in entityMapping.attributeMappings + entityMapping.relationshipMappings {
            guard let expression = property.valueExpression else { continue }
            let sets: Set<String> = [property.name]
            if let counterpart = inferredSource(of: property.name, in: entityMapping, against: inferred) {
                // A property carried forward: by the same key path and nothing else, or it was changed.
                if Self.carries(expression, counterpart) { continue }
                throw irreversible(
                    because: "the mapping model \(mapping.name) fills \(newerName).\(property.name) with \(expression), which has no known inverse"
                )
            }
            try checkSets(sets, reads: expression.sourceKeysRead, by: "the mapping model \(mapping.name)", in: entityMapping, against: inferred)
        }
    }

    /// Whether `expression` carries the source's `key` as it is: `$source.key`, or a
    /// relationship's objects looked up through the manager (by entity mapping, or by
    /// source relationship as Xcode writes some) from `$source.key` alone.
    static func carries(_ expression: Expression, _ key: String) -> Bool {
        guard expression.sourceKeysRead == [key] else { return false }
        if expression.sourceKeyPath == [key] { return true }
        guard case .functionCall(.variable("manager", []), let selector, let arguments) = expression, arguments.last?.sourceKeyPath == [key] else {
            return false
        }
        return selector == MigrationManager.destinationInstancesSelector || selector == MigrationManager.destinationInstancesForRelationshipSelector
    }

    /// The older property inference fills `name` from, in the mapping between the same entities.
    private func inferredSource(of name: String, in entityMapping: EntityMapping, against inferred: MappingModel) -> String? {
        let pair = inferred.entityMappings.first {
            $0.sourceEntityName == entityMapping.sourceEntityName && $0.destinationEntityName == entityMapping.destinationEntityName
        }
        return pair?.propertyMapping(named: name)?.valueExpression?.sourceKeysRead?.first
    }

    /// Refuses Swift or expressions that set a property `older` had (its value would not come
    /// back) or read one `newer` dropped (its value went into what they set).
    private func checkSets(
        _ sets: Set<String>,
        reads: Set<String>?,
        by what: String,
        in entityMapping: EntityMapping,
        against inferred: MappingModel
    ) throws(MigrationError) {
        guard let olderName = entityMapping.sourceEntityName, let newerName = entityMapping.destinationEntityName,
            let olderDescription = older.entity(named: olderName)
        else { return }
        for name in sets.sorted() where inferredSource(of: name, in: entityMapping, against: inferred) != nil {
            throw irreversible(because: "\(what) sets \(newerName).\(name), which '\(older.name)' had: its value before is not kept")
        }
        let carried = Set(
            inferred.entityMappings.first { $0.sourceEntityName == olderName && $0.destinationEntityName == newerName }
                .map { ($0.attributeMappings + $0.relationshipMappings).compactMap { $0.valueExpression?.sourceKeysRead?.first } } ?? []
        )
        let dropped = (older.attributes(of: olderDescription).map(\.name) + older.relationships(of: olderDescription).map(\.name)).filter {
            !carried.contains($0)
        }
        guard !dropped.isEmpty, !sets.isEmpty else { return }
        let read = reads.map { dropped.filter($0.contains) } ?? dropped
        if let first = read.first {
            throw irreversible(
                because:
                    "\(what) carries \(olderName).\(first), which '\(newer.name)' does not have, into \(sets.sorted().map { "\(newerName).\($0)" }.joined(separator: ", ")): no inverse can be inferred"
            )
        }
    }

    private func irreversible(because reason: String) -> MigrationError {
        MigrationError(
            .irreversibleStep,
            "the step back '\(newer.name)' → '\(older.name)' has no inverse to infer: in the step '\(older.name)' → '\(newer.name)', \(reason)",
            hint:
                "give the chain a mapping model from '\(newer.name)' to '\(older.name)' (its inverse), or migrate back no further than '\(newer.name)'; the store was not changed"
        )
    }
}
