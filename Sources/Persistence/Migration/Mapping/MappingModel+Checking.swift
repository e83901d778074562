import Foundation

extension MappingModel {
    /// Checks the mapping against its two models, so that its mistakes show when it is
    /// loaded rather than part-way through a migration. Loading a mapping file runs it.
    ///
    /// It reports:
    /// - models other than the ones the mapping was made for (by their version hashes);
    /// - duplicate entity mapping names;
    /// - source or destination entities that are not in their model, and mappings whose
    ///   type does not fit their entities: `add` without a destination or with a source,
    ///   `remove` without a source or with a destination or property mappings, `copy` and
    ///   `transform` without both, `copy` between entities that differ, `custom` without a
    ///   policy name;
    /// - property mappings for properties the destination entity does not have (or that
    ///   are of the other kind), or mapped twice;
    /// - value expressions that do not type-check (see `ValueExpressionTypeChecker`):
    ///   unknown variables, unknown key paths on `$source` and `$destination`, unsupported
    ///   functions and selectors, look-ups of instances of mappings that do not exist or do
    ///   not map the instances passed, and values whose type does not fit the property;
    /// - unknown key paths in a source filter.
    ///
    /// One problem is thrown as it is; several are thrown as one error that lists them all,
    /// with the first one's code, entity mapping and property. ``problems(source:destination:after:)``
    /// returns them one by one.
    ///
    /// A step of several mapping models runs them one after the other into one store; pass
    /// the ones that run before this one as `earlierPasses`. Look-ups may then name their
    /// entity mappings too (whose instances all exist by then), and no entity mapping may
    /// share a name with one of theirs.
    ///
    /// ```swift
    /// let mapping = try MappingModel.inferred(from: v1, to: v2)
    /// try mapping.check(source: v1, destination: v2)
    /// try part2.check(source: v1, destination: v2, after: [part1])
    /// ```
    ///
    /// - Throws: ``MigrationError`` with ``MigrationError/Code/invalidMappingModel``,
    ///   ``MigrationError/Code/unknownKeyPath`` or ``MigrationError/Code/typeMismatch``,
    ///   the mapping's `file`, and the entity mapping and property at fault.
    public func check(source: ManagedObjectModel, destination: ManagedObjectModel, after earlierPasses: [MappingModel] = []) throws(MigrationError) {
        try check(source: source, destination: destination, passes: earlierPasses.isEmpty ? .alone : .after(earlierPasses))
    }

    /// Every problem ``check(source:destination:after:)`` finds, in the order of the entity
    /// mappings and their properties; empty when the mapping is sound.
    public func problems(source: ManagedObjectModel, destination: ManagedObjectModel, after earlierPasses: [MappingModel] = []) -> [MigrationError] {
        problems(source: source, destination: destination, passes: earlierPasses.isEmpty ? .alone : .after(earlierPasses))
    }

    /// ``check(source:destination:after:)`` among the step's other mapping models, as far as they are known.
    func check(source: ManagedObjectModel, destination: ManagedObjectModel, passes: StepPasses) throws(MigrationError) {
        if let error = MigrationError.combining(problems(source: source, destination: destination, passes: passes)) {
            throw error
        }
    }

    /// The problems of the mapping among the step's other mapping models, as far as they are known.
    func problems(source: ManagedObjectModel, destination: ManagedObjectModel, passes: StepPasses) -> [MigrationError] {
        var check = MappingCheck(mapping: self, source: source, destination: destination, passes: passes)
        return check.run()
    }
}

extension MigrationError {
    /// One error for several: the first one itself when alone, else one that lists them all
    /// and carries the first one's code, file, entity mapping and property.
    static func combining(_ problems: [MigrationError]) -> MigrationError? {
        guard let first = problems.first else { return nil }
        guard problems.count > 1 else { return first }
        let lines = problems.map { problem in
            var located = problem
            located.file = nil
            return "\n  - " + located.description
        }
        return MigrationError(
            first.code,
            "\(problems.count) problems, each with what to do:" + lines.joined(),
            hint: "Fix each one as its line says; the mapping loads when none is left",
            file: first.file,
            entityMapping: first.entityMapping,
            property: first.property
        )
    }
}

/// Messages that loading a mapping file and checking a mapping model share.
enum MappingDiagnostics {
    /// `Bok` is not an entity of `model`.
    static func unknownEntity(_ name: String, side: ModelSide, in model: ManagedObjectModel) -> (message: String, hint: String) {
        let names = model.entities.map(\.name)
        var hint = "Use one of \(model.name)'s entities: \(names.joined(separator: ", "))"
        if let close = names.first(where: { $0.lowercased() == name.lowercased() }) {
            hint = "Did you mean \(close)? " + hint
        } else if let renamed = model.entities.first(where: { $0.renamingIdentifier == name }) {
            hint = "\(name) is called \(renamed.name) in \(model.name). " + hint
        }
        return ("the \(side) entity '\(name)' is not in \(model.name)", hint)
    }

    /// `name` is not an attribute (or relationship) of `entity`.
    static func unknownProperty(
        _ name: String,
        isAttribute: Bool,
        of entity: EntityDescription,
        in model: ManagedObjectModel
    ) -> (message: String, hint: String) {
        let kind = isAttribute ? "attribute" : "relationship"
        if isAttribute, model.relationship(named: name, of: entity) != nil {
            return (
                "'\(name)' is a relationship of \(entity.name), not an attribute",
                "Map it under \"relationships\" (relationshipMappings)"
            )
        }
        if !isAttribute, model.attribute(named: name, of: entity) != nil {
            return (
                "'\(name)' is an attribute of \(entity.name), not a relationship",
                "Map it under \"attributes\" (attributeMappings)"
            )
        }
        let names = isAttribute ? model.attributes(of: entity).map(\.name) : model.relationships(of: entity).map(\.name)
        var hint =
            names.isEmpty
            ? "\(entity.name) has no \(kind)s; remove this property mapping"
            : "Map one of \(entity.name)'s \(kind)s: \(names.joined(separator: ", ")), or add '\(name)' to the model"
        if let close = names.first(where: { $0.lowercased() == name.lowercased() }) {
            hint = "Did you mean '\(close)'? " + hint
        }
        return ("the destination entity \(entity.name) (\(model.name)) has no \(kind) '\(name)'", hint)
    }

    /// How two entities differ in what they store, for a `copy` mapping between them.
    static func differences(
        _ source: EntityDescription,
        in sourceModel: ManagedObjectModel,
        _ destination: EntityDescription,
        in destinationModel: ManagedObjectModel
    ) -> [String] {
        var result: [String] = []
        if source.name != destination.name {
            result.append("the entity is \(source.name) in the source and \(destination.name) in the destination")
        }
        let before = signatures(of: source, in: sourceModel)
        let after = signatures(of: destination, in: destinationModel)
        for name in Set(before.keys).union(after.keys).sorted() {
            switch (before[name], after[name]) {
            case (nil, _?): result.append("'\(name)' is added")
            case (_?, nil): result.append("'\(name)' is removed")
            case (let old?, let new?) where old != new: result.append("'\(name)' changes from \(old) to \(new)")
            default: break
            }
        }
        if result.isEmpty {
            result.append("their parent entities, abstract flags or version hash modifiers differ")
        }
        return result
    }

    /// Name → what a stored property looks like, as far as the version hash sees it.
    private static func signatures(of entity: EntityDescription, in model: ManagedObjectModel) -> [String: String] {
        var result: [String: String] = [:]
        for attribute in model.attributes(of: entity) where !attribute.isTransient {
            result[attribute.name] =
                "(\(attribute.type.rawValue), \(attribute.isOptional ? "optional" : "required")"
                + (attribute.versionHashModifier.map { ", modifier \($0)" } ?? "") + ")"
        }
        for relationship in model.relationships(of: entity) where !relationship.isTransient {
            result[relationship.name] =
                "(\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destinationEntityName)"
                + (relationship.isOrdered ? ", ordered" : "") + ", \(relationship.isOptional ? "optional" : "required")"
                + (relationship.versionHashModifier.map { ", modifier \($0)" } ?? "") + ")"
        }
        return result
    }
}

/// The work of ``MappingModel/check(source:destination:)``.
private struct MappingCheck {
    let mapping: MappingModel
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let passes: StepPasses
    var problems: [MigrationError] = []

    init(mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel, passes: StepPasses) {
        self.mapping = mapping
        self.source = source
        self.destination = destination
        self.passes = passes
    }

    mutating func report(
        _ code: MigrationError.Code,
        _ message: String,
        hint: String,
        entityMapping: String?,
        property: String? = nil
    ) {
        problems.append(MigrationError(code, message, hint: hint, file: mapping.file, entityMapping: entityMapping, property: property))
    }

    mutating func run() -> [MigrationError] {
        guard mapping.maps(from: source, to: destination) else {
            report(
                .invalidMappingModel,
                "the mapping was made for \(mapping.sourceModelName) → \(mapping.destinationModelName), whose version hashes differ from \(source.name) → \(destination.name)",
                hint: "Check it against the models it names; a migrator picks a mapping by the models' version hashes (maps(from:to:))",
                entityMapping: nil
            )
            return problems
        }
        var seen: [String: Int] = [:]
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            if let first = seen[entityMapping.name] {
                report(
                    .invalidMappingModel,
                    "entity mappings \(first + 1) and \(index + 1) are both named '\(entityMapping.name)'",
                    hint: "Rename one of them: manager look-ups and progress reports find entity mappings by name",
                    entityMapping: entityMapping.name
                )
            } else {
                seen[entityMapping.name] = index
            }
            if let other = passes.entityMapping(named: entityMapping.name) {
                report(
                    .invalidMappingModel,
                    "the entity mapping '\(entityMapping.name)' has the name of one in \(other.model.file ?? other.model.name), \(passes.othersDescription)",
                    hint: "Rename one of them: a step's look-ups and associations find entity mappings by name across all its mapping models",
                    entityMapping: entityMapping.name
                )
            }
        }
        for index in mapping.entityMappings.indices {
            checkEntityMapping(at: index)
        }
        return problems
    }

    /// The entity `name` of one side, reporting it when it does not exist.
    private mutating func entity(_ name: String?, side: ModelSide, of entityMapping: EntityMapping) -> (entity: EntityDescription?, known: Bool) {
        guard let name else { return (nil, true) }
        let model = side == .source ? source : destination
        if let entity = model.entity(named: name) { return (entity, true) }
        let (message, hint) = MappingDiagnostics.unknownEntity(name, side: side, in: model)
        report(.invalidMappingModel, message, hint: hint, entityMapping: entityMapping.name)
        return (nil, false)
    }

    private mutating func checkEntityMapping(at index: Int) {
        let entityMapping = mapping.entityMappings[index]
        let name = entityMapping.name
        let (sourceEntity, sourceKnown) = entity(entityMapping.sourceEntityName, side: .source, of: entityMapping)
        let (destinationEntity, destinationKnown) = entity(entityMapping.destinationEntityName, side: .destination, of: entityMapping)
        let hasSource = entityMapping.sourceEntityName != nil
        let hasDestination = entityMapping.destinationEntityName != nil
        let hasProperties = !entityMapping.attributeMappings.isEmpty || !entityMapping.relationshipMappings.isEmpty

        switch entityMapping.type {
        case .add:
            if !hasDestination {
                report(
                    .invalidMappingModel,
                    "an add mapping needs a destination entity",
                    hint: "Set its destination to the entity it adds",
                    entityMapping: name
                )
            }
            if let sourceName = entityMapping.sourceEntityName {
                report(
                    .invalidMappingModel,
                    "an add mapping has no source entity, but this one names \(sourceName)",
                    hint: "Use type transform to migrate \(sourceName)'s instances, or drop the source",
                    entityMapping: name
                )
            }
        case .remove:
            if !hasSource {
                report(
                    .invalidMappingModel,
                    "a remove mapping needs a source entity",
                    hint: "Set its source to the entity whose instances it drops",
                    entityMapping: name
                )
            }
            if let destinationName = entityMapping.destinationEntityName {
                report(
                    .invalidMappingModel,
                    "a remove mapping has no destination entity, but this one names \(destinationName)",
                    hint: "Drop the destination, or use type transform to migrate into \(destinationName)",
                    entityMapping: name
                )
            }
            if hasProperties {
                report(
                    .invalidMappingModel,
                    "a remove mapping creates no instances, so it cannot have property mappings",
                    hint: "Drop its attributes and relationships, or use type transform",
                    entityMapping: name
                )
            }
        case .copy, .transform:
            if !hasSource || !hasDestination {
                report(
                    .invalidMappingModel,
                    "a \(entityMapping.type.rawValue) mapping needs a source and a destination entity",
                    hint: "Set both, or use type add (no source) or remove (no destination)",
                    entityMapping: name
                )
            }
            if entityMapping.type == .copy, let sourceEntity, let destinationEntity,
                source.versionHash(of: sourceEntity) != destination.versionHash(of: destinationEntity)
            {
                let differences = MappingDiagnostics.differences(sourceEntity, in: source, destinationEntity, in: destination)
                report(
                    .invalidMappingModel,
                    "a copy mapping needs identical entities, but \(differences.joined(separator: "; "))",
                    hint: "Use type transform with property mappings for the changes, or custom with a policy",
                    entityMapping: name
                )
            }
        case .custom:
            if (entityMapping.policyName ?? "").isEmpty {
                report(
                    .invalidMappingModel,
                    "a custom mapping needs the name of its entity migration policy",
                    hint:
                        "Set its policy to the name an EntityMigrationPolicy is registered under (such as \(name)MigrationPolicy), or use type transform",
                    entityMapping: name
                )
            }
            if !hasSource && !hasDestination {
                report(
                    .invalidMappingModel,
                    "a custom mapping needs a source or a destination entity",
                    hint: "Set the entities its policy migrates",
                    entityMapping: name
                )
            }
        }

        // With an unknown entity, property messages would only repeat that.
        guard sourceKnown && destinationKnown else { return }
        if let destinationEntity {
            checkProperties(entityMapping.attributeMappings, isAttribute: true, of: destinationEntity, at: index)
            checkProperties(entityMapping.relationshipMappings, isAttribute: false, of: destinationEntity, at: index)
        }
        if let filter = entityMapping.sourceFilter, sourceEntity != nil {
            var checker = ValueExpressionTypeChecker(mappingModel: mapping, source: source, destination: destination, position: index)
            checker.otherPasses = passes
            checker.bareKeyPathsStartAtSource = true
            checker.mayUseLaterMappings = false
            for expression in filter.expressions {
                do throws(ValueExpressionTypeChecker.Problem) {
                    _ = try checker.type(of: expression)
                } catch {
                    report(error.code, "in the source filter '\(filter.predicateFormat)': " + error.message, hint: error.hint, entityMapping: name)
                    break
                }
            }
        }
    }

    private mutating func checkProperties(_ mappings: [PropertyMapping], isAttribute: Bool, of entity: EntityDescription, at index: Int) {
        let entityMapping = mapping.entityMappings[index]
        var checker = ValueExpressionTypeChecker(mappingModel: mapping, source: source, destination: destination, position: index)
        checker.otherPasses = passes
        checker.mayUseLaterMappings = !isAttribute
        var seen = Set<String>()
        for propertyMapping in mappings {
            let name = propertyMapping.name
            guard seen.insert(name).inserted else {
                report(
                    .invalidMappingModel,
                    "'\(name)' is mapped twice",
                    hint: "Keep one property mapping for '\(name)'",
                    entityMapping: entityMapping.name,
                    property: name
                )
                continue
            }
            let attribute = isAttribute ? destination.attribute(named: name, of: entity) : nil
            let relationship = isAttribute ? nil : destination.relationship(named: name, of: entity)
            guard attribute != nil || relationship != nil else {
                let (message, hint) = MappingDiagnostics.unknownProperty(name, isAttribute: isAttribute, of: entity, in: destination)
                report(.invalidMappingModel, message, hint: hint, entityMapping: entityMapping.name, property: name)
                continue
            }
            guard let expression = propertyMapping.valueExpression else { continue }
            do throws(ValueExpressionTypeChecker.Problem) {
                let type = try checker.type(of: expression)
                let problem =
                    if let attribute {
                        ValueExpressionTypeChecker.problem(filling: attribute, with: type, expression: expression)
                    } else if let relationship {
                        checker.problem(filling: relationship, with: type, expression: expression)
                    } else {
                        ValueExpressionTypeChecker.Problem?.none
                    }
                if let problem { throw problem }
            } catch {
                report(error.code, error.message, hint: error.hint, entityMapping: entityMapping.name, property: name)
            }
        }
    }
}

extension Predicate {
    /// Every expression the predicate compares, left to right.
    var expressions: [Expression] {
        switch self {
        case .true, .false: []
        case .and(let terms), .or(let terms): terms.flatMap(\.expressions)
        case .not(let term): term.expressions
        case .comparison(let comparison): [comparison.lhs, comparison.rhs]
        }
    }
}
