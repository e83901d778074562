import Foundation

/// Evaluates a value expression for one source instance, in NSExpression's semantics:
/// `nil` propagates through key paths and arithmetic, key paths through to-many
/// relationships give collections, `@count` counts them.
///
/// Expressions were type-checked when the mapping was loaded; the errors here are the ones
/// only data can cause (a division by zero, a string index out of range).
struct ValueExpressionEvaluator {
    var variables: [String: MigrationValue]
    let manager: MigrationManager

    func evaluate(_ expression: Expression) async throws -> MigrationValue {
        switch expression {
        case .constant(let value):
            return .value(value)
        case .keyPath(let path):
            // A bare key path is read from the source instance, as `$source.<path>`.
            guard let source = variables["source"] else { throw failure("'\(path.joined(separator: "."))' needs a source instance") }
            return try await walk(source, path[...])
        case .evaluatedObject:
            return variables["source"] ?? .null
        case .variable(let name, let path):
            guard let value = variables[name] else { throw failure("the variable $\(name) is not available here") }
            return try await walk(value, path[...])
        case .arithmetic(let op, let lhs, let rhs):
            return try arithmetic(op, try await evaluate(lhs), try await evaluate(rhs))
        case .function(let name, let arguments):
            var values: [MigrationValue] = []
            for argument in arguments { values.append(try await evaluate(argument)) }
            return try function(name, values)
        case .functionCall(let target, let selector, let arguments):
            let targetValue = try await evaluate(target)
            var values: [MigrationValue] = []
            for argument in arguments { values.append(try await evaluate(argument)) }
            return try await call(targetValue, selector, values)
        case .aggregate(let items):
            var values: [MigrationValue] = []
            for item in items { values.append(try await evaluate(item)) }
            return .list(values)
        case .object(let id):
            throw failure("an object reference (\(id)) cannot be a value expression")
        }
    }

    func failure(_ message: String) -> MigrationError {
        MigrationError(.evaluationFailed, message)
    }

    // MARK: Key paths

    private func walk(_ value: MigrationValue, _ path: ArraySlice<String>) async throws -> MigrationValue {
        guard let key = path.first else { return value }
        let rest = path.dropFirst()
        switch value {
        case .value(.null):
            return .null
        case .object(let object):
            return try await walk(try await property(key, of: object), rest)
        case .objects(let objects):
            if key.hasPrefix("@") { return try await collectionOperator(key, rest, on: objects) { try await walk($0, $1) } }
            var results: [MigrationValue] = []
            for object in objects { results.append(try await walk(.object(object), path)) }
            return flatten(results)
        case .list(let items):
            if key == "@count" { return .value(.integer(Int64(items.count))) }
            var results: [MigrationValue] = []
            for item in items { results.append(try await walk(item, path)) }
            return .list(results)
        case .manager(let manager):
            return try await walk(manager.value(forKey: key), rest)
        case .entityMapping(let mapping):
            switch key {
            case "name": return .value(.string(mapping.name))
            case "sourceEntityName": return .value(mapping.sourceEntityName.map(AttributeValue.string) ?? .null)
            case "destinationEntityName": return .value(mapping.destinationEntityName.map(AttributeValue.string) ?? .null)
            case "userInfo":
                guard let infoKey = rest.first else { throw failure("userInfo needs a key after it") }
                return .value(mapping.userInfo[infoKey] ?? .null)
            default: throw failure("an entity mapping has no '\(key)'")
            }
        case .propertyMapping(let mapping):
            switch key {
            case "name": return .value(.string(mapping.name))
            case "userInfo":
                guard let infoKey = rest.first else { throw failure("userInfo needs a key after it") }
                return .value(mapping.userInfo[infoKey] ?? .null)
            default: throw failure("a property mapping has no '\(key)'")
            }
        case .value, .policy:
            throw failure("'\(key)' cannot be read from a \(value.kindName)")
        }
    }

    private func property(_ key: String, of object: ManagedObject) async throws -> MigrationValue {
        if let relationship = object.layout.relationships[key] {
            if relationship.isToMany { return .objects(try await object.destinations(forKey: key)) }
            return try await object.destination(forKey: key).map(MigrationValue.object) ?? .null
        }
        guard object.layout.attributes[key] != nil else {
            throw failure("\(object.entity.name) has no property '\(key)'")
        }
        return .value(object.value(forKey: key))
    }

    /// Values from several objects become one list; objects stay objects.
    private func flatten(_ results: [MigrationValue]) -> MigrationValue {
        var objects: [ManagedObject] = []
        var values: [MigrationValue] = []
        var allObjects = true
        for result in results {
            switch result {
            case .object(let object):
                objects.append(object)
                values.append(result)
            case .objects(let many):
                objects += many
                values += many.map(MigrationValue.object)
            case .value(.null): continue
            default:
                allObjects = false
                values.append(result)
            }
        }
        return allObjects ? .objects(objects) : .list(values)
    }
}
