/// How an entity mapping's relationships are set in a streamed step.
enum RelationshipStage: Sendable {
    /// Every relationship mapping is a plain look-up of another mapping's instances through
    /// a source foreign key (or the to-many side of one that another mapping sets), and the
    /// policy keeps the default hook: the foreign keys are written with the instances, as
    /// the source key plus the target mapping's offset, and no instance is visited again.
    case foreignKeys([ForeignKeyLookup])
    /// The policy's `createRelationships` runs for each destination instance, because of `reason`.
    case perInstance(reason: String)

    /// `destination.<relationship> = FUNCTION($manager, "destinationInstancesForEntityMappingNamed:…",
    /// "<targetMapping>", $source.<sourceRelationship>)` for a to-one kept as a foreign key.
    struct ForeignKeyLookup: Sendable, Hashable {
        let relationship: String
        let sourceRelationship: String
        let targetMapping: String
        /// The entity and root of the objects the key names (the target mapping's destination).
        let targetEntity: String
        let targetRoot: String
    }

    /// Works out the stage of `entityMapping`, whose policy overrides `hooks`.
    static func plan(
        _ entityMapping: EntityMapping,
        in mappingModel: MappingModel,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        hooks: EntityMigrationPolicy.Hooks
    ) -> RelationshipStage {
        if hooks.contains(.createRelationships) {
            return .perInstance(reason: "the policy \(entityMapping.policyName ?? "") overrides createRelationships")
        }
        guard let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
            let destinationName = entityMapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName)
        else { return .foreignKeys([]) }
        var lookups: [ForeignKeyLookup] = []
        for relationshipMapping in entityMapping.relationshipMappings {
            guard let expression = relationshipMapping.valueExpression else { continue }
            let name = relationshipMapping.name
            guard let relationship = destination.relationship(named: name, of: destinationEntity), !relationship.isTransient else {
                return .perInstance(reason: "\(name) is not a stored relationship")
            }
            if relationship.isToMany {
                // Set from the other side's foreign key, when another mapping sets that side.
                guard let inverse = destination.inverse(of: relationship), !inverse.isToMany,
                    let inverseTarget = destination.entity(named: relationship.destinationEntityName),
                    mappingModel.entityMappings.contains(where: { other in
                        guard let otherName = other.destinationEntityName, let otherEntity = destination.entity(named: otherName) else {
                            return false
                        }
                        return destination.entity(otherEntity, isKindOf: inverseTarget)
                            && other.propertyMapping(named: inverse.name)?.valueExpression != nil
                    })
                else { return .perInstance(reason: "\(name) is a to-many relationship that no mapping sets from its to-one side") }
                // The other side's key says which, not in what order: this side sets the
                // order, as the source has it, one instance at a time.
                if relationship.isOrdered { return .perInstance(reason: "\(name) is ordered, and its order is set from this side") }
                continue
            }
            if let inverse = destination.inverse(of: relationship), !inverse.isToMany {
                return .perInstance(reason: "\(name) is one-to-one, kept at both ends")
            }
            let call = expression.destinationInstancesCall
            if let call, mappingModel.entityMapping(named: call.mapping) == nil {
                return .perInstance(reason: "\(name) looks up the instances of '\(call.mapping)', an entity mapping of another mapping model")
            }
            // The source key names a row of the target mapping's source entity, and of no
            // sub-entity another mapping might migrate: then key arithmetic is the look-up.
            guard let call, let path = call.sources.sourceKeyPath, path.count == 1,
                let sourceRelationship = source.relationship(named: path[0], of: sourceEntity), !sourceRelationship.isToMany,
                !sourceRelationship.isTransient,
                let target = mappingModel.entityMapping(named: call.mapping), target.type != .remove,
                target.sourceEntityName == sourceRelationship.destinationEntityName,
                let relatedEntity = source.entity(named: sourceRelationship.destinationEntityName), source.subentities(of: relatedEntity).isEmpty,
                let targetName = target.destinationEntityName, let targetEntity = destination.entity(named: targetName)
            else { return .perInstance(reason: "\(name) is not a look-up of another mapping's instances through a to-one relationship") }
            lookups.append(
                ForeignKeyLookup(
                    relationship: name,
                    sourceRelationship: sourceRelationship.name,
                    targetMapping: target.name,
                    targetEntity: targetName,
                    targetRoot: destination.rootEntity(of: targetEntity).name
                )
            )
        }
        return .foreignKeys(lookups)
    }
}
