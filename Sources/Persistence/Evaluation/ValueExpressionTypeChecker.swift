import Foundation

/// Which model of a mapping an entity belongs to.
enum ModelSide: Sendable, Hashable {
    case source
    case destination
}

/// The static type of a value expression, as ``ValueExpressionTypeChecker`` infers it.
indirect enum ValueExpressionType: Sendable, Hashable, CustomStringConvertible {
    /// Not checked: what `$manager`, `$entityMapping`, `$propertyMapping` and
    /// `$entityPolicy` lead to.
    case unknown
    /// `nil`.
    case null
    /// A number of no particular attribute type: a numeric literal, arithmetic, `abs:(x)`, …
    case number
    /// A value of an attribute type.
    case value(AttributeType)
    /// Instances of an entity of the source or destination model; `toMany` when a set.
    case objects(ModelSide, entity: String, toMany: Bool)
    /// Several values: an attribute through a to-many key path, `{a, b}`, a split string.
    case collection(ValueExpressionType)

    var description: String {
        switch self {
        case .unknown: "a value of unchecked type"
        case .null: "nil"
        case .number: "a number"
        case .value(let type): Self.article(type) + " " + type.rawValue
        case .objects(let side, let entity, let toMany):
            toMany ? "\(entity) objects of the \(side) model (to-many)" : "a \(entity) object of the \(side) model"
        case .collection(.value(let type)): "a collection of \(type.rawValue) values"
        case .collection(.number): "a collection of numbers"
        case .collection(let element): "a collection of \(element)"
        }
    }

    private static func article(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: "an"
        default: "a"
        }
    }

    /// Whether the value can take part in arithmetic.
    var isNumeric: Bool {
        switch self {
        case .unknown, .number: true
        case .value(let type): type.isNumeric
        default: false
        }
    }

    /// Whether the value can be used where a string is needed.
    var isString: Bool {
        switch self {
        case .unknown, .value(.string): true
        default: false
        }
    }

    /// Whether the value can be used where an integer is needed (an index).
    var isInteger: Bool {
        switch self {
        case .unknown, .number: true
        case .value(let type): type.isInteger
        default: false
        }
    }
}

/// Infers the static type of value expressions of one entity mapping against the source
/// and destination models, so that a mapping model's mistakes show when it is loaded rather
/// than at row 500 000 of a migration.
///
/// Rules:
/// - `$source` is an instance of the mapping's source entity, `$destination` one of its
///   destination entity; key paths walk their attributes and relationships, through to-one
///   and to-many relationships (a to-many makes the rest a collection); `@count` may follow
///   a to-many, as may `@sum`, `@avg`, `@min` and `@max` with a key path after them.
/// - `$manager`, `$entityMapping`, `$propertyMapping` and `$entityPolicy` are not checked
///   beyond their names, except for the manager's two instance look-ups; other variables
///   are errors.
/// - Functions and `FUNCTION` selectors have known result types
///   (``functionType(_:_:)``, ``callType(target:selector:arguments:)``); others are errors.
///
/// ```swift
/// let checker = ValueExpressionTypeChecker(mappingModel: mapping, source: v3, destination: v4, position: 0)
/// try checker.type(of: Expression(format: "$source.pages.@count")) // .value(.integer64)
/// ```
struct ValueExpressionTypeChecker {
    /// What is wrong with an expression; the caller adds the file, entity mapping and property.
    struct Problem: Error {
        var code: MigrationError.Code
        var message: String
        var hint: String
    }

    /// The variables a value expression may use.
    static let variables = ["source", "destination", "manager", "entityMapping", "propertyMapping", "entityPolicy"]
    /// The variables whose key paths and calls are not checked.
    static let uncheckedVariables: Set<String> = ["manager", "entityMapping", "propertyMapping", "entityPolicy"]
    /// `FUNCTION` selectors on a String target, with their argument kinds.
    static let stringSelectors: [(selector: String, arguments: String, result: ValueExpressionType)] = [
        ("stringByAppendingString:", "a String", .value(.string)),
        ("substringToIndex:", "an integer", .value(.string)),
        ("substringFromIndex:", "an integer", .value(.string)),
        ("uppercaseString", "no arguments", .value(.string)),
        ("lowercaseString", "no arguments", .value(.string)),
        ("stringByReplacingOccurrencesOfString:withString:", "two Strings", .value(.string)),
        ("componentsSeparatedByString:", "a String", .collection(.value(.string))),
    ]
    /// The functions (`name:(…)`) a value expression may use.
    static let supportedFunctions = [
        "uppercase", "lowercase", "length", "add:to", "from:subtract", "multiply:by", "divide:by", "modulus:by",
        "raise:toPower", "abs", "floor", "ceiling", "trunc", "sqrt", "log", "ln", "exp", "now", "sum", "count",
        "min", "max", "average", "median", "mode", "stddev", "CAST",
    ]
    static let castTypes: [(name: String, type: ValueExpressionType)] = [
        ("NSString", .value(.string)), ("NSNumber", .number), ("NSDate", .value(.date)),
        ("NSDecimalNumber", .value(.decimal)), ("NSData", .value(.binary)), ("NSUUID", .value(.uuid)),
        ("NSURL", .value(.uri)),
    ]

    let mappingModel: MappingModel
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    /// The position of the checked entity mapping in `mappingModel.entityMappings`.
    let position: Int
    /// Whether manager look-ups may name mappings that run later (or this one). True for
    /// relationship mappings, which run after every mapping has created its instances;
    /// false for attribute mappings, which run while this mapping creates its instances.
    var mayUseLaterMappings = true
    /// Whether bare key paths and `SELF` start at the source instance, as in a source filter.
    var bareKeyPathsStartAtSource = false
    /// The step's other mapping models, whose entity mappings look-ups may name too: they
    /// have run (or will, as the step's check confirms) before this mapping model starts.
    var otherPasses = StepPasses.alone

    var entityMapping: EntityMapping { mappingModel.entityMappings[position] }

    // MARK: Expressions

    func type(of expression: Expression) throws(Problem) -> ValueExpressionType {
        switch expression {
        case .constant(let value):
            return Self.type(of: value)
        case .keyPath(let path):
            guard bareKeyPathsStartAtSource else {
                let spelled = path.joined(separator: ".")
                throw Problem(
                    code: .unknownKeyPath,
                    message: "the key path '\(spelled)' has no object to start from: a value expression starts at a variable",
                    hint: "Write $source.\(spelled) for the source instance's value, or $destination.\(spelled) for the new instance's"
                )
            }
            return try walk(path, from: try instance(.source, spelled: "SELF"), spelled: "SELF")
        case .evaluatedObject:
            guard bareKeyPathsStartAtSource else {
                throw Problem(
                    code: .unknownKeyPath,
                    message: "SELF has no object in a value expression",
                    hint: "Write $source for the source instance or $destination for the new one"
                )
            }
            return try instance(.source, spelled: "SELF")
        case .variable(let name, let path):
            return try variableType(name, path)
        case .arithmetic(let op, let lhs, let rhs):
            for operand in [lhs, rhs] {
                let type = try type(of: operand)
                guard type.isNumeric else {
                    throw Problem(
                        code: .typeMismatch,
                        message: "'\(op.rawValue)' needs numbers, but \(operand.format) is \(type)",
                        hint: "Use numbers on both sides of '\(op.rawValue)'; join strings with FUNCTION(a, \"stringByAppendingString:\", b)"
                    )
                }
            }
            return .number
        case .function(let name, let arguments):
            return try functionType(name, arguments)
        case .functionCall(let target, let selector, let arguments):
            return try callType(target: target, selector: selector, arguments: arguments)
        case .aggregate(let items):
            var types: [ValueExpressionType] = []
            for item in items { types.append(try type(of: item)) }
            return .collection(Self.common(types) ?? .unknown)
        case .object(let id):
            throw Problem(
                code: .typeMismatch,
                message: "the object ID \(id) names a row of one store; a mapping model runs on any store",
                hint: "Find the object through $source and its relationships instead"
            )
        }
    }

    static func type(of value: AttributeValue) -> ValueExpressionType {
        switch value {
        case .null: .null
        case .integer, .double: .number
        case .decimal: .value(.decimal)
        case .string: .value(.string)
        case .bool: .value(.boolean)
        case .date: .value(.date)
        case .binary: .value(.binary)
        case .uuid: .value(.uuid)
        case .uri: .value(.uri)
        }
    }

    /// The common type of several values, if they have one.
    static func common(_ types: [ValueExpressionType]) -> ValueExpressionType? {
        let known = types.filter { $0 != .unknown && $0 != .null }
        guard let first = known.first else { return types.isEmpty ? nil : types[0] }
        if known.allSatisfy({ $0 == first }) { return first }
        if known.allSatisfy(\.isNumeric) { return .number }
        return nil
    }

    // MARK: Variables and key paths

    private func variableType(_ name: String, _ path: [String]) throws(Problem) -> ValueExpressionType {
        switch name {
        case "source":
            return try walk(path, from: try instance(.source, spelled: "$source"), spelled: "$source")
        case "destination":
            return try walk(path, from: try instance(.destination, spelled: "$destination"), spelled: "$destination")
        case _ where Self.uncheckedVariables.contains(name):
            return .unknown
        default:
            let known = Self.variables.map { "$" + $0 }.joined(separator: ", ")
            let close = Self.variables.first { $0.lowercased() == name.lowercased() || $0.hasPrefix(name) || name.hasPrefix($0) }
            throw Problem(
                code: .unknownKeyPath,
                message: "unknown variable $\(name)",
                hint: (close.map { "Did you mean $\($0)? " } ?? "") + "A value expression may use \(known)"
            )
        }
    }

    /// `$source` or `$destination`: one instance of the mapping's entity on that side.
    private func instance(_ side: ModelSide, spelled: String) throws(Problem) -> ValueExpressionType {
        let name = side == .source ? entityMapping.sourceEntityName : entityMapping.destinationEntityName
        guard let name else {
            throw Problem(
                code: .unknownKeyPath,
                message: "\(spelled) has no instance: this \(entityMapping.type.rawValue) mapping has no \(side) entity",
                hint: side == .source
                    ? "Set the mapping's source entity, or fill the property with a constant"
                    : "Set the mapping's destination entity"
            )
        }
        let model = side == .source ? source : destination
        // An unknown entity is reported once, for the mapping itself.
        guard model.entity(named: name) != nil else { return .unknown }
        return .objects(side, entity: name, toMany: false)
    }

    /// The type at the end of `path`, walked from a value of type `start` spelled `spelled`.
    func walk(_ path: [String], from start: ValueExpressionType, spelled root: String) throws(Problem) -> ValueExpressionType {
        var current = start
        var spelled = root
        var index = 0
        while index < path.count {
            let key = path[index]
            switch current {
            case .unknown:
                return .unknown
            case .objects(let side, let entityName, let toMany):
                let model = side == .source ? source : destination
                guard let entity = model.entity(named: entityName) else { return .unknown }
                if key.hasPrefix("@") {
                    guard toMany else {
                        throw Problem(
                            code: .unknownKeyPath,
                            message: "\(key) needs a to-many relationship, but \(spelled) is \(current)",
                            hint: "Put \(key) right after a to-many relationship, as in $source.pages.@count"
                        )
                    }
                    if key == "@count" {
                        current = .value(.integer64)
                    } else {
                        return try collectionOperator(key, rest: Array(path[(index + 1)...]), side: side, entity: entityName, spelled: spelled)
                    }
                } else if let attribute = model.attribute(named: key, of: entity) {
                    current = toMany ? .collection(.value(attribute.type)) : .value(attribute.type)
                } else if let relationship = model.relationship(named: key, of: entity) {
                    current = .objects(side, entity: relationship.destinationEntityName, toMany: toMany || relationship.isToMany)
                } else {
                    throw unknownKey(key, of: entity, in: model, side: side, spelled: spelled)
                }
            case .collection:
                guard key == "@count" else {
                    throw Problem(
                        code: .unknownKeyPath,
                        message: "\(spelled) is \(current); only @count may follow it, not '\(key)'",
                        hint: "Count it with \(spelled).@count, or aggregate it with a function such as sum:(\(spelled))"
                    )
                }
                current = .value(.integer64)
            default:
                throw Problem(
                    code: .unknownKeyPath,
                    message: "\(spelled) is \(current); it has no key '\(key)'",
                    hint: "End the key path at \(spelled), or use a function on it such as length:(\(spelled))"
                )
            }
            spelled += "." + key
            index += 1
        }
        return current
    }

    /// `@sum.price`, `@avg.price`, `@min.date`, `@max.date` after a to-many relationship.
    private func collectionOperator(
        _ key: String,
        rest: [String],
        side: ModelSide,
        entity: String,
        spelled: String
    ) throws(Problem) -> ValueExpressionType {
        let supported = "@count, @sum, @avg, @min, @max, @unionOfObjects, @distinctUnionOfObjects, @unionOfSets and @distinctUnionOfSets"
        if ["@unionOfObjects", "@distinctUnionOfObjects", "@unionOfSets", "@distinctUnionOfSets"].contains(key) {
            guard !rest.isEmpty else {
                throw Problem(
                    code: .unknownKeyPath,
                    message: "\(key) needs the key path of what to collect after it",
                    hint: "Write \(spelled).\(key).<key path>, as in $source.shelves.\(key).books"
                )
            }
            // Every instance's values (or objects) at the rest of the path, as one collection.
            switch try walk(rest, from: .objects(side, entity: entity, toMany: false), spelled: "\(spelled).\(key)") {
            case .unknown: return .unknown
            case .objects(let side, let entity, _): return .objects(side, entity: entity, toMany: true)
            case .collection(let element): return .collection(element)
            case let element: return .collection(element)
            }
        }
        guard ["@sum", "@avg", "@min", "@max"].contains(key) else {
            throw Problem(
                code: .unknownKeyPath,
                message: "the collection operator \(key) is not supported",
                hint: "Use one of \(supported)"
            )
        }
        guard !rest.isEmpty else {
            throw Problem(
                code: .unknownKeyPath,
                message: "\(key) needs the key path of an attribute after it",
                hint: "Write \(spelled).\(key).<attribute>, as in $source.pages.\(key).number"
            )
        }
        var element = try walk(rest, from: .objects(side, entity: entity, toMany: false), spelled: "\(spelled).\(key)")
        if case .collection(let inner) = element { element = inner }
        let path = "\(spelled).\(key).\(rest.joined(separator: "."))"
        switch (key, element) {
        case (_, .unknown): return .unknown
        case ("@sum", _) where element.isNumeric, ("@avg", _) where element.isNumeric: return .number
        case ("@min", _) where element.isNumeric || element == .value(.date) || element.isString,
            ("@max", _) where element.isNumeric || element == .value(.date) || element.isString:
            return element
        default:
            throw Problem(
                code: .typeMismatch,
                message: "\(key) needs numbers\(key == "@min" || key == "@max" ? " or dates" : ""), but \(path) is \(element)",
                hint: "Apply \(key) to a numeric attribute, or count with @count"
            )
        }
    }

    private func unknownKey(_ key: String, of entity: EntityDescription, in model: ManagedObjectModel, side: ModelSide, spelled: String) -> Problem {
        let names = model.attributes(of: entity).map(\.name) + model.relationships(of: entity).map(\.name)
        var hint = "\(entity.name) has \(names.isEmpty ? "no properties" : names.joined(separator: ", "))"
        if let close = names.first(where: { $0.lowercased() == key.lowercased() }) {
            hint = "Did you mean '\(close)'? " + hint
        } else if side == .source, let renamed = renamedSourceName(of: key), names.contains(renamed) {
            hint = "'\(key)' is the destination's name; in the source model it is '\(renamed)'. " + hint
        }
        return Problem(
            code: .unknownKeyPath,
            message:
                "\(spelled) is \(ValueExpressionType.objects(side, entity: entity.name, toMany: false)) (\(model.name)), which has no attribute or relationship '\(key)'",
            hint: hint
        )
    }

    /// The source name of a destination property of this mapping's entity that was renamed.
    private func renamedSourceName(of key: String) -> String? {
        guard let name = entityMapping.destinationEntityName, let entity = destination.entity(named: name) else { return nil }
        if let attribute = destination.attribute(named: key, of: entity) { return attribute.renamingIdentifier }
        return destination.relationship(named: key, of: entity)?.renamingIdentifier
    }

    // MARK: Functions

    /// The result of a function `name:(arguments)`.
    ///
    /// `uppercase`, `lowercase` → String (of a String); `length` → Integer 64 (of a String);
    /// arithmetic functions → a number (of numbers); `now` → Date; `count` → Integer 64;
    /// `sum`, `average`, `median`, `stddev` → a number; `min`, `max`, `mode` → the
    /// arguments' common type; `CAST(x, "NSString")` and friends → the named type.
    func functionType(_ name: String, _ arguments: [Expression]) throws(Problem) -> ValueExpressionType {
        var types: [ValueExpressionType] = []
        for argument in arguments { types.append(try type(of: argument)) }
        func require(_ test: (ValueExpressionType) -> Bool, _ what: String) throws(Problem) {
            for (argument, type) in zip(arguments, types) where !test(type) {
                throw Problem(
                    code: .typeMismatch,
                    message: "\(name) needs \(what), but \(argument.format) is \(type)",
                    hint: "Pass \(what) to \(name)"
                )
            }
        }
        switch name {
        case "uppercase", "lowercase":
            try require(\.isString, "a String")
            return .value(.string)
        case "length":
            try require(\.isString, "a String")
            return .value(.integer64)
        case "add:to", "from:subtract", "multiply:by", "divide:by", "modulus:by", "raise:toPower",
            "abs", "floor", "ceiling", "trunc", "sqrt", "log", "ln", "exp":
            try require(\.isNumeric, "numbers")
            return .number
        case "now":
            return .value(.date)
        case "count":
            return .value(.integer64)
        case "sum", "average", "median", "stddev", "min", "max", "mode":
            let elements = try elementTypes(name, arguments, types)
            let common = Self.common(elements)
            if ["min", "max", "mode"].contains(name) {
                guard let common else {
                    throw Problem(
                        code: .typeMismatch,
                        message: "\(name) needs values of one type, but finds \(elements.map(\.description).joined(separator: ", "))",
                        hint: "Pass \(name) numbers, or dates, or strings, not a mix"
                    )
                }
                return common
            }
            guard elements.allSatisfy(\.isNumeric) else {
                throw Problem(
                    code: .typeMismatch,
                    message: "\(name) needs numbers, but finds \(elements.filter { !$0.isNumeric }[0])",
                    hint: "Pass \(name) numbers, such as $source.pages.number"
                )
            }
            return .number
        case FunctionCatalog.cast:
            guard arguments.count == 2, case .constant(.string(let typeName)) = arguments[1] else { return .unknown }
            guard let type = Self.castTypes.first(where: { $0.name == typeName })?.type else {
                throw Problem(
                    code: .invalidMappingModel,
                    message: "CAST to \"\(typeName)\" is not supported in a mapping model",
                    hint: "Cast to one of \(Self.castTypes.map { "\"\($0.name)\"" }.joined(separator: ", "))"
                )
            }
            return type
        default:
            throw Problem(
                code: .invalidMappingModel,
                message: "the function \(name) is not supported in a mapping model",
                hint: "Use one of \(Self.supportedFunctions.joined(separator: ", "))"
            )
        }
    }

    /// The values an aggregate function works on: its arguments, collections unpacked.
    private func elementTypes(_ name: String, _ arguments: [Expression], _ types: [ValueExpressionType]) throws(Problem) -> [ValueExpressionType] {
        var result: [ValueExpressionType] = []
        for (argument, type) in zip(arguments, types) {
            switch type {
            case .collection(let element): result.append(element)
            case .objects:
                throw Problem(
                    code: .typeMismatch,
                    message: "\(name) needs values, but \(argument.format) is \(type)",
                    hint: "Follow the relationship to an attribute, as in \(argument.format).price, or count with count:(\(argument.format))"
                )
            default: result.append(type)
            }
        }
        return result
    }

    // MARK: FUNCTION

    /// All selectors, for messages.
    static var supportedSelectors: String {
        "on $manager: \(MigrationManager.destinationInstancesSelector), \(MigrationManager.sourceInstancesSelector), "
            + "\(MigrationManager.destinationInstancesForRelationshipSelector); "
            + "on a String: \(stringSelectors.map(\.selector).joined(separator: ", ")); on an object: valueForKeyPath:"
    }

    /// The result of `FUNCTION(target, "selector", arguments…)`.
    func callType(target: Expression, selector: String, arguments: [Expression]) throws(Problem) -> ValueExpressionType {
        let expected = selector.filter { $0 == ":" }.count
        guard expected == arguments.count else {
            throw Problem(
                code: .invalidMappingModel,
                message: "the selector \(selector) takes \(expected) argument\(expected == 1 ? "" : "s"), but FUNCTION passes \(arguments.count)",
                hint: "Pass one argument after the selector for each ':' in it"
            )
        }
        if case .variable("manager", []) = target,
            selector == MigrationManager.destinationInstancesSelector || selector == MigrationManager.sourceInstancesSelector
        {
            return try managerLookup(selector, arguments)
        }
        if case .variable("manager", []) = target, selector == MigrationManager.destinationInstancesForRelationshipSelector {
            return try relationshipLookup(selector, arguments)
        }
        let targetType = try type(of: target)
        var types: [ValueExpressionType] = []
        for argument in arguments { types.append(try type(of: argument)) }
        if case .variable(let name, _) = target, Self.uncheckedVariables.contains(name) {
            return .unknown
        }
        if selector == "valueForKeyPath:" {
            guard case .constant(.string(let path)) = arguments[0] else { return .unknown }
            return try walk(path.split(separator: ".").map(String.init), from: targetType, spelled: target.format)
        }
        guard let entry = Self.stringSelectors.first(where: { $0.selector == selector }) else {
            throw Problem(
                code: .invalidMappingModel,
                message: "the selector \(selector) is not supported in a mapping model",
                hint: "Use one of the supported selectors: \(Self.supportedSelectors)"
            )
        }
        guard targetType.isString else {
            throw Problem(
                code: .typeMismatch,
                message: "\(selector) needs a String target, but \(target.format) is \(targetType)",
                hint: "Call \(selector) on a String, such as $source.title"
            )
        }
        let wantsInteger = selector.hasPrefix("substring")
        for (argument, type) in zip(arguments, types) where !(wantsInteger ? type.isInteger : type.isString) {
            throw Problem(
                code: .typeMismatch,
                message: "\(selector) needs \(entry.arguments), but \(argument.format) is \(type)",
                hint: "Pass \(entry.arguments) to \(selector)"
            )
        }
        return entry.result
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)`:
    /// the destination instances of the source relationship's destination entity (through
    /// each instance's own entity mapping at run time).
    private func relationshipLookup(_ selector: String, _ arguments: [Expression]) throws(Problem) -> ValueExpressionType {
        let sourceEntity = entityMapping.sourceEntityName.flatMap { source.entity(named: $0) }
        guard case .constant(.string(let name)) = arguments[0], let sourceEntity,
            let relationship = source.relationship(named: name, of: sourceEntity)
        else {
            throw Problem(
                code: .invalidMappingModel,
                message:
                    "the first argument of \(selector) must name a relationship of the mapping's source entity in quotes, not \(arguments[0].format)",
                hint: "Name one of " + (sourceEntity.map { source.relationships(of: $0).map(\.name).joined(separator: ", ") } ?? "its relationships")
            )
        }
        let instances = try type(of: arguments[1])
        let toMany: Bool
        if case .objects(_, _, let many) = instances { toMany = many } else { toMany = relationship.isToMany }
        let mapping = mappingModel.entityMappings.first {
            $0.sourceEntityName == relationship.destinationEntityName && $0.destinationEntityName != nil
        }
        guard let entity = mapping?.destinationEntityName else { return .unknown }
        return .objects(.destination, entity: entity, toMany: toMany)
    }

    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "Name", instances)`
    /// and its reverse, `sourceInstancesForEntityMappingNamed:destinationInstances:`.
    private func managerLookup(_ selector: String, _ arguments: [Expression]) throws(Problem) -> ValueExpressionType {
        let forward = selector == MigrationManager.destinationInstancesSelector
        let (fromSide, toSide): (ModelSide, ModelSide) = forward ? (.source, .destination) : (.destination, .source)
        let choices =
            "Name one of " + (mappingModel.entityMappings + otherPasses.others.flatMap(\.entityMappings)).map(\.name).joined(separator: ", ")
        guard case .constant(.string(let name)) = arguments[0] else {
            throw Problem(
                code: .invalidMappingModel,
                message: "the first argument of \(selector) must be an entity mapping's name in quotes, not \(arguments[0].format)",
                hint: choices
            )
        }
        let instances = try type(of: arguments[1])
        // The mapping whose instances those are, for hints.
        var suggestion = ""
        if case .objects(fromSide, let entity, _) = instances,
            let match = mappingModel.entityMappings.first(where: { (forward ? $0.sourceEntityName : $0.destinationEntityName) == entity })
        {
            suggestion = "; the mapping of \(entity) instances is \(match.name)"
        }
        let target: EntityMapping
        if let index = mappingModel.entityMappings.firstIndex(where: { $0.name == name }) {
            if !mayUseLaterMappings && index >= position {
                throw Problem(
                    code: .invalidMappingModel,
                    message:
                        "an attribute's value looks up the instances of '\(name)', which \(index == position ? "is this very mapping" : "runs after this one"), so none exist yet",
                    hint: index == position
                        ? "Set the value in a relationship mapping or a policy instead"
                        : "Move '\(name)' before '\(entityMapping.name)' in entityMappings, or set the value in a relationship mapping"
                )
            }
            target = mappingModel.entityMappings[index]
        } else if let other = otherPasses.entityMapping(named: name) {
            // A whole earlier pass has run: its instances exist even while this one creates its own.
            target = other.mapping
        } else if case .unknown = otherPasses {
            return .unknown
        } else if case .alone = otherPasses {
            throw Problem(
                code: .invalidMappingModel,
                message: "\(selector) names the entity mapping '\(name)', which this mapping model does not have",
                hint: choices + suggestion
                    + ". If another mapping model of the same step has it, load the step's mapping models together (MappingModel.load(directory:)) and name their order (MigrationVersion.mappingModelNames)"
            )
        } else {
            var hint = choices + suggestion
            if case .after = otherPasses {
                hint += ", or run the mapping model that has '\(name)' before this one (MigrationVersion.mappingModelNames)"
            }
            throw Problem(
                code: .invalidMappingModel,
                message: "\(selector) names the entity mapping '\(name)', which neither this mapping model nor \(otherPasses.othersDescription) has",
                hint: hint
            )
        }
        let fromName = forward ? target.sourceEntityName : target.destinationEntityName
        let toName = forward ? target.destinationEntityName : target.sourceEntityName
        let fromModel = forward ? source : destination
        let toModel = forward ? destination : source
        var toMany = false
        switch instances {
        case .unknown, .null:
            break
        case .objects(fromSide, let entity, let many):
            toMany = many
            guard let fromName, let fromEntity = fromModel.entity(named: fromName) else {
                if fromName == nil {
                    throw Problem(
                        code: .invalidMappingModel,
                        message: "'\(name)' has no \(fromSide) entity, so it maps no \(entity) instances",
                        hint: "Name the mapping whose \(fromSide) entity is \(entity)" + suggestion
                    )
                }
                return .unknown
            }
            guard let given = fromModel.entity(named: entity),
                fromModel.entity(given, isKindOf: fromEntity) || fromModel.entity(fromEntity, isKindOf: given)
            else {
                throw Problem(
                    code: .typeMismatch,
                    message: "'\(name)' maps \(fromName) instances, but \(arguments[1].format) is \(instances)",
                    hint: "Name the mapping whose \(fromSide) entity is \(entity)" + suggestion + ", or pass \(fromName) instances"
                )
            }
        default:
            throw Problem(
                code: .typeMismatch,
                message: "\(selector) needs \(fromSide) instances, but \(arguments[1].format) is \(instances)",
                hint:
                    "Pass \(forward ? "$source" : "$destination") or one of its relationships, such as \(forward ? "$source" : "$destination").pages"
            )
        }
        guard let toName else {
            throw Problem(
                code: .invalidMappingModel,
                message:
                    "'\(name)' is \(target.type == .add ? "an" : "a") \(target.type.rawValue) mapping without a \(toSide) entity, so it has no \(toSide) instances",
                hint: "Name a mapping that has a \(toSide) entity"
            )
        }
        guard toModel.entity(named: toName) != nil else { return .unknown }
        return .objects(toSide, entity: toName, toMany: toMany)
    }

    // MARK: Destinations

    /// Why a value of `type` cannot fill `attribute`, or `nil` if it can.
    ///
    /// Numbers fit every numeric type and Booleans (as Core Data stores an NSNumber in a
    /// BOOL attribute: 0 is false, any other number true; Xcode's mapping models give `0` and
    /// `1` for them), Booleans every numeric type (1 and 0), `nil` fits optional attributes, anything else only its own type.
    static func problem(filling attribute: AttributeDescription, with type: ValueExpressionType, expression: Expression) -> Problem? {
        let fits: Bool
        switch type {
        case .unknown: fits = true
        case .null:
            guard attribute.isOptional else {
                return Problem(
                    code: .typeMismatch,
                    message: "nil cannot fill '\(attribute.name)', which is required",
                    hint: "Give '\(attribute.name)' a \(attribute.type.rawValue) value, or make it optional in the model"
                )
            }
            fits = true
        case .number: fits = attribute.type.isNumeric || attribute.type == .boolean
        case .value(let given):
            // Binary data fills a Transformable attribute and the other way round: both are the stored bytes.
            let bytes: Set<AttributeType> = [.binary, .transformable]
            fits =
                given == attribute.type || (given.isNumberOrBoolean && attribute.type.isNumberOrBoolean)
                || (bytes.contains(given) && bytes.contains(attribute.type))
        case .objects, .collection: fits = false
        }
        guard !fits else { return nil }
        var hint = "Change the expression so that it gives \(ValueExpressionType.value(attribute.type))"
        switch (attribute.type, type) {
        case (.string, _) where type.isNumeric: hint += ", e.g. CAST(\(expression.format), \"NSString\")"
        case (_, .value(.string)) where attribute.type.isNumeric: hint += ", e.g. CAST(\(expression.format), \"NSNumber\")"
        case (_, .collection): hint += ", e.g. with @count or sum:(…)"
        case (_, .objects): hint += ", e.g. by following the relationship to an attribute"
        default: break
        }
        return Problem(
            code: .typeMismatch,
            message: "'\(attribute.name)' is \(ValueExpressionType.value(attribute.type)) attribute, but \(expression.format) is \(type)",
            hint: hint + ", or map it to an attribute of that type"
        )
    }

    /// Why a value of `type` cannot fill `relationship`, or `nil` if it can.
    ///
    /// The value must be destination instances of the relationship's destination entity or
    /// a sub-entity of it; to-one and to-many may differ, as when a relationship changes
    /// between the two in a lightweight migration.
    func problem(filling relationship: RelationshipDescription, with type: ValueExpressionType, expression: Expression) -> Problem? {
        switch type {
        case .unknown:
            return nil
        case .null:
            if relationship.isOptional || relationship.isToMany { return nil }
            return Problem(
                code: .typeMismatch,
                message: "nil cannot fill '\(relationship.name)', which is required",
                hint: "Give '\(relationship.name)' \(relationship.destinationEntityName) instances, or make it optional in the model"
            )
        case .objects(.destination, let entity, _):
            if let given = destination.entity(named: entity), let expected = destination.entity(named: relationship.destinationEntityName),
                destination.entity(given, isKindOf: expected)
            {
                return nil
            }
            let mapping = mappingModel.entityMappings.first { $0.destinationEntityName == relationship.destinationEntityName }
            return Problem(
                code: .typeMismatch,
                message: "'\(relationship.name)' leads to \(relationship.destinationEntityName), but \(expression.format) is \(type)",
                hint: "Look up the destination instances of a mapping whose destination entity is \(relationship.destinationEntityName)"
                    + (mapping.map { " (\($0.name))" } ?? "")
            )
        case .objects(.source, let entity, _):
            let mapping = mappingModel.entityMappings.first { $0.sourceEntityName == entity }
            let call =
                "FUNCTION($manager, \"\(MigrationManager.destinationInstancesSelector)\", \"\(mapping?.name ?? "\(entity)To\(relationship.destinationEntityName)")\", \(expression.format))"
            return Problem(
                code: .typeMismatch,
                message: "'\(relationship.name)' needs destination instances, but \(expression.format) is \(type)",
                hint: "Turn the source instances into their migrated instances: \(call)"
            )
        default:
            return Problem(
                code: .typeMismatch,
                message: "'\(relationship.name)' leads to \(relationship.destinationEntityName) objects, but \(expression.format) is \(type)",
                hint:
                    "Map a relationship with FUNCTION($manager, \"\(MigrationManager.destinationInstancesSelector)\", \"<mapping>\", $source.<relationship>)"
            )
        }
    }
}
