import Foundation

extension MappingModel {
    /// Infers the mapping of a lightweight migration, by Core Data's rules.
    ///
    /// - Entities, attributes and relationships are matched by name or renaming identifier
    ///   (`elementID`): a destination element whose renaming identifier is the name of a
    ///   source element, or whose identifier equals the source element's, is its successor.
    ///   So renames carry across several versions (v1 → v3).
    /// - Added entities get an `add` mapping; removed ones a `remove` mapping; matched ones
    ///   `copy` when unchanged, `transform` otherwise.
    /// - Added optional attributes, or ones with a default, start empty or at the default;
    ///   an attribute that becomes non-optional needs a default for the rows without a value.
    /// - Numeric attributes may change between numeric types; relationships may change
    ///   between to-one and to-many; entities may move in their hierarchy.
    ///
    /// ```swift
    /// let mapping = try MappingModel.inferred(from: bookStore1, to: bookStore2)
    /// mapping.entityMappings.map(\.name) // ["BookToBook", "PageToPage"]
    /// ```
    ///
    /// - Throws: ``MigrationError/Code/cannotInferMapping`` naming the entity, the property
    ///   and why, when a change needs a mapping model.
    public static func inferred(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws(MigrationError) -> MappingModel {
        var inference = MappingInference(source: source, destination: destination)
        let mappings = try inference.entityMappings()
        return MappingModel(
            name: "\(source.name) to \(destination.name) (inferred)",
            source: source,
            destination: destination,
            entityMappings: mappings,
            isInferred: true
        )
    }

    /// The source entity each destination entity continues, by name or renaming identifier.
    static func matchEntities(source: ManagedObjectModel, destination: ManagedObjectModel) -> [String: String] {
        var result: [String: String] = [:]
        var taken = Set<String>()
        for entity in destination.entities {
            let candidates = source.entities.filter { !taken.contains($0.name) }
            let match =
                candidates.first { $0.name == entity.migrationIdentifier }
                ?? candidates.first { $0.migrationIdentifier == entity.migrationIdentifier }
            if let match {
                result[entity.name] = match.name
                taken.insert(match.name)
            }
        }
        return result
    }

    /// The source property a destination property continues, by name or renaming identifier.
    static func matchProperty<P>(_ property: P, among candidates: [P], name: KeyPath<P, String>, identifier: KeyPath<P, String>) -> P? {
        candidates.first { $0[keyPath: name] == property[keyPath: identifier] }
            ?? candidates.first { $0[keyPath: identifier] == property[keyPath: identifier] }
    }

    /// The conventional name of the entity mapping between two entities.
    static func mappingName(source: String?, destination: String?) -> String {
        switch (source, destination) {
        case let (s?, d?): "\(s)To\(d)"
        case let (s?, nil): "\(s)ToNothing"
        case let (nil, d?): "NothingTo\(d)"
        case (nil, nil): "Nothing"
        }
    }
}

/// The work of ``MappingModel/inferred(from:to:)``.
private struct MappingInference {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    /// Destination entity name → source entity name.
    let matches: [String: String]

    init(source: ManagedObjectModel, destination: ManagedObjectModel) {
        self.source = source
        self.destination = destination
        self.matches = MappingModel.matchEntities(source: source, destination: destination)
    }

    func failure(_ entity: String, _ property: String?, _ why: String) -> MigrationError {
        MigrationError(
            .cannotInferMapping,
            "\(source.name) → \(destination.name) cannot be inferred: \(why)",
            hint: "add a mapping model for this step (an .xcmappingmodel made in Xcode, or a JSON mapping file) or change the model",
            entityMapping: entity,
            property: property
        )
    }

    /// The name of the mapping that migrates instances of a source entity.
    func mappingName(forSourceEntity name: String) -> String? {
        guard let destinationName = matches.first(where: { $0.value == name })?.key else { return nil }
        return MappingModel.mappingName(source: name, destination: destinationName)
    }

    mutating func entityMappings() throws(MigrationError) -> [EntityMapping] {
        var result: [EntityMapping] = []
        for entity in destination.entities {
            guard let sourceName = matches[entity.name], let sourceEntity = source.entity(named: sourceName) else {
                // A new entity: Core Data adds an empty mapping; no instances are created.
                result.append(
                    EntityMapping(
                        name: MappingModel.mappingName(source: nil, destination: entity.name),
                        type: .add,
                        sourceEntityName: nil,
                        destinationEntityName: entity.name
                    )
                )
                continue
            }
            let attributes = try attributeMappings(from: sourceEntity, to: entity)
            let relationships = try relationshipMappings(from: sourceEntity, to: entity)
            let unchanged = source.versionHash(of: sourceEntity) == destination.versionHash(of: entity) && sourceEntity.name == entity.name
            result.append(
                EntityMapping(
                    name: MappingModel.mappingName(source: sourceName, destination: entity.name),
                    type: unchanged ? .copy : .transform,
                    sourceEntityName: sourceName,
                    destinationEntityName: entity.name,
                    attributeMappings: attributes,
                    relationshipMappings: relationships
                )
            )
        }
        let continued = Set(matches.values)
        for entity in source.entities where !continued.contains(entity.name) {
            result.append(
                EntityMapping(
                    name: MappingModel.mappingName(source: entity.name, destination: nil),
                    type: .remove,
                    sourceEntityName: entity.name,
                    destinationEntityName: nil
                )
            )
        }
        return result
    }

    func attributeMappings(from sourceEntity: EntityDescription, to entity: EntityDescription) throws(MigrationError) -> [PropertyMapping] {
        let candidates = source.attributes(of: sourceEntity).filter { !$0.isTransient }
        var result: [PropertyMapping] = []
        for attribute in destination.attributes(of: entity) where !attribute.isTransient {
            let match = MappingModel.matchProperty(attribute, among: candidates, name: \.name, identifier: \.migrationIdentifier)
            guard let match else {
                if !attribute.isOptional && attribute.defaultValue == nil {
                    throw failure(entity.name, attribute.name, "the new attribute '\(attribute.name)' is required and has no default value")
                }
                result.append(PropertyMapping(name: attribute.name))
                continue
            }
            // Numbers and Booleans are stored alike (Core Data's NSNumber): one becomes the
            // other, a Boolean 1 or 0, a number true where it is not 0.
            if match.type != attribute.type && !(match.type.isNumberOrBoolean && attribute.type.isNumberOrBoolean) {
                throw failure(
                    entity.name,
                    attribute.name,
                    "'\(attribute.name)' changes type from \(match.type.rawValue) to \(attribute.type.rawValue)"
                )
            }
            // Becoming required with no default is inferred, as Core Data infers it: the
            // migration fails, naming them, if rows have no value (the step's validation).
            result.append(PropertyMapping(name: attribute.name, valueExpression: .variable("source", keyPath: [match.name])))
        }
        return result
    }

    func relationshipMappings(from sourceEntity: EntityDescription, to entity: EntityDescription) throws(MigrationError) -> [PropertyMapping] {
        let candidates = source.relationships(of: sourceEntity).filter { !$0.isTransient }
        var result: [PropertyMapping] = []
        for relationship in destination.relationships(of: entity) where !relationship.isTransient {
            let match = MappingModel.matchProperty(relationship, among: candidates, name: \.name, identifier: \.migrationIdentifier)
            guard let match else {
                // A required to-many with no minimum count starts empty, as Core Data infers it;
                // a required to-one, or a to-many needing members, has nothing to come from.
                if !relationship.isOptional && !(relationship.isToMany && relationship.minCount == 0) {
                    let need =
                        relationship.isToMany
                        ? "needs at least \(relationship.minCount) \(relationship.minCount == 1 ? "object" : "objects")" : "is required"
                    throw failure(entity.name, relationship.name, "the new relationship '\(relationship.name)' \(need)")
                }
                result.append(PropertyMapping(name: relationship.name))
                continue
            }
            // The source relationship's destinations must migrate into this relationship's destination.
            guard let mappingName = mappingName(forSourceEntity: match.destinationEntityName),
                let migratedTo = matches.first(where: { $0.value == match.destinationEntityName })?.key,
                let migratedEntity = destination.entity(named: migratedTo),
                let expected = destination.entity(named: relationship.destinationEntityName),
                destination.entity(migratedEntity, isKindOf: expected)
            else {
                throw failure(
                    entity.name,
                    relationship.name,
                    "'\(relationship.name)' now leads to \(relationship.destinationEntityName), which \(match.destinationEntityName) does not become"
                )
            }
            // A to-one that becomes required is inferred alike: rows without one fail the step.
            result.append(
                PropertyMapping(
                    name: relationship.name,
                    valueExpression: .destinationInstances(
                        forEntityMappingNamed: mappingName,
                        sourceInstances: .variable("source", keyPath: [match.name])
                    )
                )
            )
        }
        return result
    }
}
