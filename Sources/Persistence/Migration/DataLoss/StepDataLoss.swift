/// Works out what one step drops, from its two models and its mapping models alone (see
/// ``DataLossWarning``).
///
/// An entity mapping migrates the rows of exactly its source entity (not of its
/// sub-entities), so each concrete source entity is checked against the mappings of that
/// entity. A property, inherited ones included, is carried when one of them reads it
/// through `$source.<name>`; a `copy` mapping or an expression that passes `$source` whole
/// may read anything. A relationship is also carried when its inverse is. What a policy
/// does in Swift cannot be seen: a warning about an entity mapping with a policy names it.
struct StepDataLoss {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let mappingModels: [MappingModel]

    private var entityMappings: [EntityMapping] { mappingModels.flatMap(\.entityMappings) }

    func warnings() -> [DataLossWarning] {
        var result: [DataLossWarning] = []
        for entity in source.entities where !entity.isAbstract {
            let mappings = self.mappings(of: entity)
            if mappings.isEmpty {
                result.append(DataLossWarning(.entityRemoved(entity: entity.name), counting: .rows(entity: entity.name)))
            } else {
                result += propertiesNotCarried(of: entity, by: mappings)
            }
        }
        for mapping in entityMappings where mapping.type != .remove {
            result += narrowedAndMisfitting(in: mapping)
            if let filter = mapping.sourceFilter, let entity = mapping.sourceEntityName {
                // Core Data splits an entity's rows between mappings with filters: another one may take the rest.
                let other = entityMappings.first { $0.name != mapping.name && $0.type != .remove && $0.sourceEntityName == entity }
                result.append(
                    DataLossWarning(
                        .sourceFiltered(entity: entity, entityMapping: mapping.name, filter: filter.predicateFormat),
                        mayBeCarriedBy: other.map { "the entity mapping \($0.name)" } ?? mapping.policyName.map { "its policy \($0)" },
                        counting: .notMatching(entity: entity, filter: filter)
                    )
                )
            }
        }
        return result
    }

    /// The entity mappings that migrate the rows of exactly `entity`.
    private func mappings(of entity: EntityDescription) -> [EntityMapping] {
        entityMappings.filter { $0.type != .remove && $0.sourceEntityName == entity.name }
    }

    /// What the mappings read of their source: the first key of every `$source.<key>` path,
    /// or `nil` when one of them may read anything.
    private func keysRead(by mappings: [EntityMapping]) -> Set<String>? {
        var keys = Set<String>()
        for mapping in mappings {
            if mapping.type == .copy { return nil }
            for property in mapping.attributeMappings + mapping.relationshipMappings {
                guard let expression = property.valueExpression else { continue }
                guard let read = expression.sourceKeysRead else { return nil }
                keys.formUnion(read)
            }
        }
        return keys
    }

    private func propertiesNotCarried(of entity: EntityDescription, by mappings: [EntityMapping]) -> [DataLossWarning] {
        guard let read = keysRead(by: mappings) else { return [] }
        let policy = mappings.compactMap(\.policyName).first.map { "its policy \($0)" }
        let mapping = mappings[0]
        var result: [DataLossWarning] = []
        for attribute in source.attributes(of: entity) where !attribute.isTransient && !read.contains(attribute.name) {
            result.append(
                DataLossWarning(
                    .attributeNotCarried(entity: entity.name, attribute: attribute.name, entityMapping: mapping.name),
                    mayBeCarriedBy: policy,
                    counting: .values(entity: entity.name, property: attribute.name)
                )
            )
        }
        for relationship in source.relationships(of: entity) where !relationship.isTransient && !read.contains(relationship.name) {
            guard let target = source.entity(named: relationship.destinationEntityName) else { continue }
            // The rows the inverse lives on: the target's and its sub-entities', each with its own mappings.
            let targetMappings = source.entities.filter { source.entity($0, isKindOf: target) }.flatMap(self.mappings(of:))
            // Links to rows that are not migrated go with them (warned about as removed).
            if targetMappings.isEmpty { continue }
            let inverse = source.inverse(of: relationship)
            if let inverse {
                guard let targetRead = keysRead(by: targetMappings), !targetRead.contains(inverse.name),
                    // One warning for the pair's links, from the side named first (or a relationship that is its own inverse).
                    (entity.name, relationship.name) <= (target.name, inverse.name)
                else { continue }
            }
            result.append(
                DataLossWarning(
                    .relationshipNotCarried(
                        entity: entity.name,
                        relationship: relationship.name,
                        entityMapping: mapping.name,
                        inverse: inverse.map { "\(target.name).\($0.name)" }
                    ),
                    mayBeCarriedBy: policy ?? targetMappings.compactMap(\.policyName).first.map { "the policy \($0)" },
                    counting: .links(entity: entity.name, relationship: relationship.name)
                )
            )
        }
        return result
    }

    /// To-many relationships that fill a to-one, and `$source.<attribute>` values that may
    /// not fit the attribute they fill.
    private func narrowedAndMisfitting(in mapping: EntityMapping) -> [DataLossWarning] {
        guard let sourceName = mapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
            let destinationName = mapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName)
        else { return [] }
        var result: [DataLossWarning] = []
        for property in mapping.relationshipMappings {
            guard let expression = property.valueExpression,
                let path = expression.sourceKeyPath ?? expression.destinationInstancesCall?.sources.sourceKeyPath, path.count == 1,
                let from = source.relationship(named: path[0], of: sourceEntity), from.isToMany,
                let into = destination.relationship(named: property.name, of: destinationEntity), !into.isToMany
            else { continue }
            result.append(
                DataLossWarning(
                    .toManyNarrowed(
                        entity: sourceName,
                        relationship: from.name,
                        entityMapping: mapping.name,
                        into: "\(destinationName).\(into.name)"
                    ),
                    mayBeCarriedBy: mapping.policyName.map { "its policy \($0)" },
                    counting: .severalLinks(entity: sourceName, relationship: from.name)
                )
            )
        }
        for property in mapping.attributeMappings {
            guard let path = property.valueExpression?.sourceKeyPath, path.count == 1,
                let from = source.attribute(named: path[0], of: sourceEntity),
                let into = destination.attribute(named: property.name, of: destinationEntity),
                let misfit = ValueFit.misfit(from: from, into: into)
            else { continue }
            result.append(
                DataLossWarning(
                    .valueMayNotFit(
                        entity: sourceName,
                        attribute: from.name,
                        entityMapping: mapping.name,
                        into: "\(destinationName).\(into.name)",
                        because: misfit.reason
                    ),
                    mayBeCarriedBy: mapping.policyName.map { "its policy \($0)" },
                    counting: .misfits(entity: sourceName, attribute: from.name, misfit.conditions)
                )
            )
        }
        return result
    }
}

extension Expression {
    /// The first key of each `$source.<key>…` path the expression reads; `nil` when it uses
    /// `$source` whole (passed to a function, say), which may read anything.
    var sourceKeysRead: Set<String>? {
        switch self {
        case .variable("source", let path):
            return path.first.map { [$0] }
        case .constant, .keyPath, .evaluatedObject, .variable, .object:
            return []
        case .arithmetic(_, let lhs, let rhs):
            return Self.union([lhs, rhs])
        case .function(_, let arguments), .aggregate(let arguments):
            return Self.union(arguments)
        case .functionCall(let target, _, let arguments):
            return Self.union([target] + arguments)
        }
    }

    private static func union(_ expressions: [Expression]) -> Set<String>? {
        var keys = Set<String>()
        for expression in expressions {
            guard let read = expression.sourceKeysRead else { return nil }
            keys.formUnion(read)
        }
        return keys
    }
}
