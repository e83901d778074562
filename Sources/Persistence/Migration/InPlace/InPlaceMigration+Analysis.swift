/// What an inferred mapping says, in the terms the in-place planner needs: which source
/// entity, attribute and relationship each destination one continues.
///
/// Building it also checks that the mapping is one that can run as SQL: inferred, without
/// policies or filters, every value a plain `$source.<property>`.
struct InPlaceMappingAnalysis {
    typealias Unsupported = InPlaceMigration.Unsupported

    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    /// Destination entity → the source entity whose rows become its rows.
    private(set) var sourceOf: [String: String] = [:]
    /// Source entity → the destination entity its rows become.
    private(set) var destinationOf: [String: String] = [:]
    /// Destination entity → destination attribute → the source attribute it copies.
    private(set) var attributeSources: [String: [String: String]] = [:]
    /// Destination entity → destination relationship → the source relationship it copies.
    private(set) var relationshipSources: [String: [String: String]] = [:]

    init(mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel) throws(Unsupported) {
        self.source = source
        self.destination = destination
        guard mapping.isInferred else {
            throw Unsupported("'\(mapping.name)' is not an inferred (lightweight) mapping")
        }
        guard mapping.maps(from: source, to: destination) else {
            throw Unsupported("'\(mapping.name)' does not lead from \(source.name) to \(destination.name)")
        }
        for entityMapping in mapping.entityMappings {
            try record(entityMapping, in: mapping)
        }
    }

    private mutating func record(_ entityMapping: EntityMapping, in mapping: MappingModel) throws(Unsupported) {
        let name = entityMapping.name
        if let policy = entityMapping.policyName {
            throw Unsupported("\(name) runs the policy \(policy), which needs the objects")
        }
        if entityMapping.sourceFilter != nil {
            throw Unsupported("\(name) filters its source objects")
        }
        switch entityMapping.type {
        case .custom:
            throw Unsupported("\(name) is a custom entity mapping")
        case .add, .remove:
            // New entities start empty; removed ones lose their rows. Neither has values to map.
            return
        case .copy, .transform:
            break
        }
        guard let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
            let destinationName = entityMapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName)
        else {
            throw Unsupported("\(name) names an entity the models do not have")
        }
        guard sourceOf[destinationName] == nil, destinationOf[sourceName] == nil else {
            throw Unsupported("\(name) maps an entity that another entity mapping maps too")
        }
        sourceOf[destinationName] = sourceName
        destinationOf[sourceName] = destinationName

        var attributes: [String: String] = [:]
        for propertyMapping in entityMapping.attributeMappings {
            guard let attribute = destination.attribute(named: propertyMapping.name, of: destinationEntity), !attribute.isTransient else {
                throw Unsupported("\(name) maps '\(propertyMapping.name)', which is no stored attribute of \(destinationName)")
            }
            guard let expression = propertyMapping.valueExpression else { continue }
            guard let path = expression.sourceKeyPath, path.count == 1,
                let sourceAttribute = source.attribute(named: path[0], of: sourceEntity), !sourceAttribute.isTransient
            else {
                throw Unsupported("\(name) computes '\(propertyMapping.name)' with an expression other than a source attribute")
            }
            attributes[attribute.name] = sourceAttribute.name
        }
        attributeSources[destinationName] = attributes

        var relationships: [String: String] = [:]
        for propertyMapping in entityMapping.relationshipMappings {
            guard let relationship = destination.relationship(named: propertyMapping.name, of: destinationEntity), !relationship.isTransient else {
                throw Unsupported("\(name) maps '\(propertyMapping.name)', which is no stored relationship of \(destinationName)")
            }
            guard let expression = propertyMapping.valueExpression else { continue }
            guard let call = expression.destinationInstancesCall, let path = call.sources.sourceKeyPath, path.count == 1,
                let sourceRelationship = source.relationship(named: path[0], of: sourceEntity), !sourceRelationship.isTransient,
                let target = mapping.entityMapping(named: call.mapping),
                target.sourceEntityName == sourceRelationship.destinationEntityName
            else {
                throw Unsupported(
                    "\(name) fills '\(propertyMapping.name)' with an expression other than the destination instances of a source relationship"
                )
            }
            relationships[relationship.name] = sourceRelationship.name
        }
        relationshipSources[destinationName] = relationships
    }

    /// The source entity a destination entity continues.
    func sourceEntity(of entity: EntityDescription) -> EntityDescription? {
        sourceOf[entity.name].flatMap { source.entity(named: $0) }
    }

    /// The destination entity a source entity becomes.
    func destinationEntity(of entity: EntityDescription) -> EntityDescription? {
        destinationOf[entity.name].flatMap { destination.entity(named: $0) }
    }
}

extension ManagedObjectModel {
    /// The entity that declares the relationship `name` that `entity` has (itself or an ancestor).
    func declaringEntity(ofRelationship name: String, from entity: EntityDescription) -> EntityDescription? {
        ([entity] + ancestors(of: entity)).first { $0.relationship(named: name) != nil }
    }
}
