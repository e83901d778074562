import Foundation

/// Evaluates a predicate on objects in memory, meaning what ``SQLCompiler``'s SQL
/// means on rows, so that a fetch answers for its context's unsaved objects as the store
/// answers for saved ones (an object matches before its save exactly when its row matches
/// after it):
///
/// - a comparison with `nil` is unknown, `AND` and `OR` follow SQL's three-valued logic, and
///   `NOT` is true of an unknown (`IS NOT TRUE`), as in `NSPredicate`;
/// - `== nil` tests for nil, and `!=` is true between nil and a value;
/// - `ANY` needs a destination for which the comparison is true, `ALL` fails on one for
///   which it is not true, `NONE` on one for which it is;
/// - strings compare by code point, `[c]` and `[d]` fold as ``SQLiteFunctions/fold(_:flags:)``
///   does, and `MATCHES` must match the whole string.
///
/// Key paths through relationships read the context's objects (its unsaved changes
/// included), loading saved ones from the store when they are not registered.
struct PredicateEvaluator {
    let context: ManagedObjectContext

    /// An operand, evaluated.
    indirect enum Value {
        case scalar(AttributeValue)
        /// A to-one destination or `SELF`.
        case object(ObjectID)
        /// The destinations of a to-many key path, and the rest of the path.
        case toMany([ManagedObject], rest: [String])
        case list([Value])
    }

    func matches(_ object: ManagedObject, _ predicate: Predicate) async throws -> Bool {
        try await evaluate(predicate, on: object) == true
    }

    /// `true`, `false`, or `nil` for unknown.
    private func evaluate(_ predicate: Predicate, on object: ManagedObject) async throws -> Bool? {
        switch predicate {
        case .true: return true
        case .false: return false
        case .and(let parts):
            return try await combine(parts, on: object, decidedBy: false)
        case .or(let parts):
            return try await combine(parts, on: object, decidedBy: true)
        case .not(let inner):
            return try await evaluate(inner, on: object) != true
        case .comparison(let comparison):
            return try await evaluate(comparison, on: object)
        }
    }

    /// `AND` (decided by a false part) or `OR` (by a true one): otherwise unknown if a part
    /// is unknown, else the other value.
    private func combine(_ parts: [Predicate], on object: ManagedObject, decidedBy decisive: Bool) async throws -> Bool? {
        var result: Bool? = !decisive
        for part in parts {
            let value = try await evaluate(part, on: object)
            if value == decisive { return decisive }
            if value == nil { result = nil }
        }
        return result
    }

    private func evaluate(_ c: Comparison, on object: ManagedObject) async throws -> Bool? {
        let lhs = try await value(of: c.lhs, on: object)
        if case .toMany(let destinations, let rest) = lhs {
            // `ANY pages.number > 3`; without a modifier a to-many key path is read as ANY.
            let inner = Comparison(rest.isEmpty ? .evaluatedObject : .keyPath(rest), c.op, c.rhs, options: c.options)
            switch c.modifier {
            case .all:
                for destination in destinations where try await evaluate(inner, on: destination) != true { return false }
                return true
            case .none:
                for destination in destinations where try await evaluate(inner, on: destination) == true { return false }
                return true
            case .any, .direct:
                for destination in destinations where try await evaluate(inner, on: destination) == true { return true }
                return false
            }
        }
        if c.op == .in, case .toMany(let destinations, let rest) = try await value(of: c.rhs, on: object) {
            // `%@ IN pages`: some destination is the object.
            let inner = Comparison(rest.isEmpty ? .evaluatedObject : .keyPath(rest), .equal, c.lhs, options: c.options)
            for destination in destinations where try await evaluate(inner, on: destination) == true { return true }
            return false
        }
        if c.op == .equal || c.op == .notEqual, c.rhs == .constant(.null) || c.lhs == .constant(.null) {
            // `x == nil` is `IS NULL`, whichever side the nil is on.
            let other = c.rhs == .constant(.null) ? lhs : try await value(of: c.rhs, on: object)
            return Self.isNull(other) == (c.op == .equal)
        }
        let rhs = try await value(of: c.rhs, on: object)
        return try Self.test(lhs, c.op, rhs, flags: Int32(c.options.rawValue))
    }

    // MARK: Operands

    func value(of expression: Expression, on object: ManagedObject) async throws -> Value {
        switch expression {
        case .constant(let value): return .scalar(value)
        case .object(let id): return .object(id)
        case .evaluatedObject: return .object(object.objectID)
        case .keyPath(let path): return try await walk(path[...], from: object)
        case .variable(let name, _):
            throw ExpressionError(.unboundVariable, "the variable $\(name) has no value; pass it in substitutionVariables")
        case .aggregate(let items):
            var values: [Value] = []
            for item in items { values.append(try await value(of: item, on: object)) }
            return .list(values)
        case .arithmetic(let op, let lhs, let rhs):
            guard case .scalar(let l) = try await value(of: lhs, on: object), let a = l.doubleValue,
                case .scalar(let r) = try await value(of: rhs, on: object), let b = r.doubleValue
            else { return .scalar(.null) }
            switch op {
            case .add: return .scalar(.double(a + b))
            case .subtract: return .scalar(.double(a - b))
            case .multiply: return .scalar(.double(a * b))
            case .divide: return .scalar(b == 0 ? .null : .double(a / b))
            case .power: return .scalar(.double(pow(a, b)))
            }
        case .function(let name, let arguments):
            return try await function(name, arguments, on: object)
        case .functionCall(_, let selector, _):
            throw ExpressionError(.unsupported, "FUNCTION(…, '\(selector)') cannot run inside a fetch")
        }
    }

    private func function(_ name: String, _ arguments: [Expression], on object: ManagedObject) async throws -> Value {
        if name.lowercased() == "now" { return .scalar(.date(Date())) }
        guard arguments.count == 1 else { throw ExpressionError(.unsupported, "\(name) takes one argument, got \(arguments.count)") }
        guard case .scalar(let argument) = try await value(of: arguments[0], on: object) else {
            throw ExpressionError(.unsupported, "\(name) takes a value, not objects")
        }
        if argument.isNull { return .scalar(.null) }
        switch name.lowercased() {
        case "lowercase": return .scalar(argument.stringValue.map { .string($0.lowercased()) } ?? .null)
        case "uppercase": return .scalar(argument.stringValue.map { .string($0.uppercased()) } ?? .null)
        case "length": return .scalar(argument.stringValue.map { .integer(Int64($0.unicodeScalars.count)) } ?? .null)
        case "abs": return .scalar(argument.doubleValue.map { .double(abs($0)) } ?? .null)
        default: throw ExpressionError(.unsupported, "the function '\(name)' is not available in fetches")
        }
    }

    /// Follows a key path from an object: attributes, to-one destinations, to-many
    /// destinations (and `@count`).
    private func walk(_ path: ArraySlice<String>, from object: ManagedObject) async throws -> Value {
        var current = object
        var path = path
        while let key = path.popFirst() {
            if key == "SELF" || key == "self" {
                if path.isEmpty { return .object(current.objectID) }
                continue
            }
            if current.layout.attributes[key] != nil { return .scalar(current.value(forKey: key)) }
            guard let relationship = current.layout.relationships[key] else {
                throw ExpressionError(.unknownKeyPath, "the entity \(current.entity.name) has no property for the key path '\(key)'")
            }
            if relationship.isToMany {
                let destinations = try await context.destinations(of: current, key: key)
                if Array(path) == ["@count"] { return .scalar(.integer(Int64(destinations.count))) }
                // `@sum.price`, `@avg.price`, `@min.date`, `@max.date`: one value of the destinations'.
                if path.count == 2, let operation = CollectionOperator(rawValue: path[path.startIndex]), operation.isAggregate {
                    let attribute = path[path.index(after: path.startIndex)]
                    let values = try destinations.compactMap { destination -> AttributeValue? in
                        guard destination.layout.attributes[attribute] != nil else {
                            throw ExpressionError(
                                .unknownKeyPath,
                                "the entity \(destination.entity.name) has no attribute '\(attribute)' for \(operation.rawValue)"
                            )
                        }
                        let value = destination.value(forKey: attribute)
                        // Not `value.isNull ? nil : value`: that `nil` would be AttributeValue's own.
                        guard !value.isNull else { return Optional.none }
                        return value
                    }
                    return .scalar(try operation.aggregate(values))
                }
                return .toMany(destinations, rest: Array(path))
            }
            guard let id = current.destinationID(forKey: key) else { return .scalar(.null) }
            if path.isEmpty { return .object(id) }
            current = try await context.existingObject(with: id)
        }
        return .object(current.objectID)
    }

    // MARK: Comparing

    static func isNull(_ value: Value) -> Bool {
        if case .scalar(.null) = value { true } else { false }
    }

    private static func test(_ lhs: Value, _ op: ComparisonOperator, _ rhs: Value, flags: Int32) throws -> Bool? {
        switch op {
        case .equal, .notEqual:
            let equal = same(lhs, rhs, flags: flags)
            if op == .equal { return equal }
            // `!=` is `IS DISTINCT FROM`: known even against nil.
            return !(equal ?? (isNull(lhs) && isNull(rhs)))
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard let order = order(lhs, rhs, flags: flags) else { return nil }
            switch op {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqual: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .between:
            guard case .list(let bounds) = rhs, bounds.count == 2 else {
                throw ExpressionError(.unsupported, "BETWEEN needs two bounds, as in BETWEEN {1, 5}")
            }
            let low = order(lhs, bounds[0], flags: flags).map { $0 != .orderedAscending }
            let high = order(lhs, bounds[1], flags: flags).map { $0 != .orderedDescending }
            if low == false || high == false { return false }
            return low == nil || high == nil ? nil : true
        case .in:
            let items: [Value]
            if case .list(let list) = rhs { items = list } else { items = [rhs] }
            var result: Bool? = false
            for item in items {
                switch same(lhs, item, flags: flags) {
                case true?: return true
                case nil: result = nil
                case false?: break
                }
            }
            return result
        case .beginsWith, .endsWith, .contains, .like:
            guard case .scalar(let l) = lhs, case .scalar(let r) = rhs, let text = l.stringValue.map({ fold($0, flags) }),
                let needle = r.stringValue.map({ fold($0, flags) })
            else { return nil }
            switch op {
            case .beginsWith: return text.utf8.starts(with: needle.utf8)
            case .endsWith: return text.utf8.reversed().starts(with: needle.utf8.reversed())
            case .contains: return needle.isEmpty || text.utf8.firstRange(of: needle.utf8) != nil
            default: return LikePattern(needle).matches(text)
            }
        case .matches:
            guard case .scalar(let l) = lhs, let text = l.stringValue, case .scalar(let r) = rhs, let pattern = r.stringValue else { return nil }
            let regex = try StringMatching.wholeMatch(pattern, options: flags & 1 != 0 ? [.caseInsensitive] : [])
            let subject = flags & 2 != 0 ? fold(text, 2) : text
            return regex.firstMatch(in: subject, range: NSRange(subject.startIndex..., in: subject)) != nil
        }
    }

    private static func fold(_ text: String, _ flags: Int32) -> String {
        StringMatching.fold(text, flags: flags)
    }

    /// Whether two values are equal; `nil` when either is nil.
    private static func same(_ lhs: Value, _ rhs: Value, flags: Int32) -> Bool? {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            return a == b || (a.permanentID != nil && a.permanentID == b.permanentID)
        case (.object(let id), .scalar(let value)), (.scalar(let value), .object(let id)):
            if value.isNull { return nil }
            return id.primaryKey != nil && value.integerValue == id.primaryKey
        default:
            return order(lhs, rhs, flags: flags).map { $0 == .orderedSame }
        }
    }

    /// How two single values compare, as the engines compare them; `nil` when either is nil
    /// or they cannot be compared.
    static func order(_ lhs: Value, _ rhs: Value, flags: Int32 = 0) -> ComparisonResult? {
        switch (lhs, rhs) {
        case (.scalar(let a), .scalar(let b)): return order(a, b, flags: flags)
        case (.object(let a), .object(let b)):
            guard let l = a.primaryKey, let r = b.primaryKey else { return nil }
            return order(.integer(l), .integer(r))
        case (.object(let a), .scalar(let b)):
            return a.primaryKey.flatMap { order(.integer($0), b) }
        case (.scalar(let a), .object(let b)):
            return b.primaryKey.flatMap { order(a, .integer($0)) }
        default: return nil
        }
    }

    static func order(_ lhs: AttributeValue, _ rhs: AttributeValue, flags: Int32 = 0) -> ComparisonResult? {
        switch (lhs, rhs) {
        case (.null, _), (_, .null): return nil
        case (.integer(let a), .integer(let b)): return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (.string(let a), .string(let b)):
            let (l, r) = flags == 0 ? (a, b) : (fold(a, flags), fold(b, flags))
            // By code point, which UTF-8's byte order is.
            if l.utf8.elementsEqual(r.utf8) { return .orderedSame }
            return l.utf8.lexicographicallyPrecedes(r.utf8) ? .orderedAscending : .orderedDescending
        case (.date(let a), .date(let b)): return compare(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case (.date(let a), _): return rhs.doubleValue.map { compare(a.timeIntervalSinceReferenceDate, $0) }
        case (_, .date(let b)): return lhs.doubleValue.map { compare($0, b.timeIntervalSinceReferenceDate) }
        case (.binary(let a), .binary(let b)): return bytes(a, b)
        case (.uuid(let a), .uuid(let b)): return bytes(withUnsafeBytes(of: a.uuid) { Data($0) }, withUnsafeBytes(of: b.uuid) { Data($0) })
        case (.uuid(let a), .string(let b)), (.string(let b), .uuid(let a)):
            // A UUID given as text: only equality means anything.
            return UUID(uuidString: b).map { $0 == a ? .orderedSame : .orderedAscending }
        case (.uri(let a), .uri(let b)): return order(.string(a.absoluteString), .string(b.absoluteString))
        case (.uri(let a), .string(let b)): return order(.string(a.absoluteString), .string(b), flags: flags)
        case (.string(let a), .uri(let b)): return order(.string(a), .string(b.absoluteString), flags: flags)
        default:
            guard let a = lhs.doubleValue, let b = rhs.doubleValue else { return nil }
            return compare(a, b)
        }
    }

    private static func compare(_ a: Double, _ b: Double) -> ComparisonResult {
        a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
    }

    private static func bytes(_ a: Data, _ b: Data) -> ComparisonResult {
        if a == b { return .orderedSame }
        return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
    }
}

/// `NSPredicate`'s `LIKE` pattern: `*` any run of characters, `?` one, a backslash makes
/// the next character literal. Characters are Unicode scalars, as the engines count them.
struct LikePattern {
    enum Token: Equatable {
        case anyRun
        case one
        case literal(Unicode.Scalar)
    }

    let tokens: [Token]

    init(_ pattern: String) {
        var tokens: [Token] = []
        var escaping = false
        for scalar in pattern.unicodeScalars {
            if escaping {
                tokens.append(.literal(scalar))
                escaping = false
                continue
            }
            switch scalar {
            case "\\": escaping = true
            case "*": tokens.append(.anyRun)
            case "?": tokens.append(.one)
            default: tokens.append(.literal(scalar))
            }
        }
        self.tokens = tokens
    }

    /// Whether the whole of `text` matches: one row of the usual table per character.
    func matches(_ text: String) -> Bool {
        var row = [Bool](repeating: false, count: tokens.count + 1)
        row[0] = true
        for (j, token) in tokens.enumerated() where token == .anyRun && row[j] { row[j + 1] = true }
        for scalar in text.unicodeScalars {
            var next = [Bool](repeating: false, count: tokens.count + 1)
            for (j, token) in tokens.enumerated() {
                switch token {
                case .anyRun: next[j + 1] = next[j] || row[j + 1]
                case .one: next[j + 1] = row[j]
                case .literal(let literal): next[j + 1] = row[j] && literal == scalar
                }
            }
            row = next
        }
        return row[tokens.count]
    }
}
