/// Works out what one step drops, from its two models and its mapping models alone (see
/// ``DataLossWarning``).
///
/// A property is carried when some property mapping of an entity mapping of its entity
/// (or of a parent or child entity) reads it through `$source.<name>`; a `copy` mapping or
/// an expression that passes `$source` whole may read anything. A relationship is also
/// carried when its inverse is. What a policy does in Swift cannot be seen: a warning about
/// an entity mapping with a policy names it.
struct StepDataLoss {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let mappingModels: [MappingModel]

    private var entityMappings: [EntityMapping] { mappingModels.flatMap(\.entityMappings) }

    func warnings() -> [DataLossWarning] {
        var result: [DataLossWarning] = []
        for entity in source.entities {
            let around = mappings(around: entity)
            if around.isEmpty {
                if !entity.isAbstract, !isCoveredByAncestor(entity) {
                    result.append(DataLossWarning(.entityRemoved(entity: entity.name), counting: .rows(entity: entity.name)))
                }
                continue
            }
            result += propertiesNotCarried(of: entity, around: around)
        }
        for mapping in entityMappings where mapping.type != .remove {
            result += narrowedAndMisfitting(in: mapping)
            if let filter = mapping.sourceFilter, let entity = mapping.sourceEntityName {
                result.append(DataLossWarning(
                    .sourceFiltered(entity: entity, entityMapping: mapping.name, filter: filter.predicateFormat),
                    policy: mapping.policyName, counting: .notMatching(entity: entity, filter: filter)))
            }
        }
        return result
    }

    // MARK: Entities

    /// The entity mappings that migrate rows of `entity`: its own, its ancestors' (whose
    /// fetches include it) and its descendants' (which may read what it declares).
    private func mappings(around entity: EntityDescription) -> [EntityMapping] {
        entityMappings.filter { mapping in
            guard mapping.type != .remove, let name = mapping.sourceEntityName, let other = source.entity(named: name) else { return false }
            return source.entity(entity, isKindOf: other) || source.entity(other, isKindOf: entity)
        }
    }

    private func isCoveredByAncestor(_ entity: EntityDescription) -> Bool {
        entityMappings.contains { mapping in
            guard mapping.type != .remove, let name = mapping.sourceEntityName, let other = source.entity(named: name) else { return false }
            return source.entity(entity, isKindOf: other)
        }
    }

    // MARK: Properties

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

    private func propertiesNotCarried(of entity: EntityDescription, around: [EntityMapping]) -> [DataLossWarning] {
        guard let read = keysRead(by: around) else { return [] }
        let policy = around.compactMap(\.policyName).first
        let mapping = around.first { $0.sourceEntityName == entity.name } ?? around[0]
        var result: [DataLossWarning] = []
        for attribute in entity.attributes where !attribute.isTransient && !read.contains(attribute.name) {
            result.append(DataLossWarning(
                .attributeNotCarried(entity: entity.name, attribute: attribute.name, entityMapping: mapping.name),
                policy: policy, counting: .values(entity: entity.name, property: attribute.name)))
        }
        for relationship in entity.relationships where !relationship.isTransient && !read.contains(relationship.name) {
            // Carried from the other side, or gone with an entity that is warned about already.
            guard let target = source.entity(named: relationship.destinationEntityName) else { continue }
            let targetMappings = mappings(around: target)
            if targetMappings.isEmpty { continue }
            let inverse = source.inverse(of: relationship)
            if let inverse {
                guard let targetRead = keysRead(by: targetMappings), !targetRead.contains(inverse.name),
                    // One warning for the pair's links, from the side named first.
                    (entity.name, relationship.name) < (target.name, inverse.name)
                else { continue }
            }
            result.append(DataLossWarning(
                .relationshipNotCarried(entity: entity.name, relationship: relationship.name, entityMapping: mapping.name,
                                        inverse: inverse.map { "\(target.name).\($0.name)" }),
                policy: policy ?? targetMappings.compactMap(\.policyName).first, counting: .links(entity: entity.name, relationship: relationship.name)))
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
            result.append(DataLossWarning(
                .toManyNarrowed(entity: sourceName, relationship: from.name, entityMapping: mapping.name, into: "\(destinationName).\(into.name)"),
                policy: mapping.policyName, counting: .severalLinks(entity: sourceName, relationship: from.name)))
        }
        for property in mapping.attributeMappings {
            guard let path = property.valueExpression?.sourceKeyPath, path.count == 1,
                let from = source.attribute(named: path[0], of: sourceEntity),
                let into = destination.attribute(named: property.name, of: destinationEntity),
                let misfit = ValueFit.misfit(from: from, into: into)
            else { continue }
            result.append(DataLossWarning(
                .valueMayNotFit(entity: sourceName, attribute: from.name, entityMapping: mapping.name, into: "\(destinationName).\(into.name)", because: misfit.reason),
                policy: mapping.policyName, counting: .misfits(entity: sourceName, attribute: from.name, misfit.conditions)))
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
