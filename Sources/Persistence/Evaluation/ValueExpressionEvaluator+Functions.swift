import Foundation

/// Arithmetic, NSExpression's built-in functions and the `FUNCTION(target, "selector:")`
/// calls a value expression may use.
extension ValueExpressionEvaluator {
    func arithmetic(_ op: ArithmeticOperator, _ lhs: MigrationValue, _ rhs: MigrationValue) throws -> MigrationValue {
        guard let l = lhs.attributeValue, let r = rhs.attributeValue else {
            throw failure("\(op.rawValue) needs numbers, got \(lhs.kindName) and \(rhs.kindName)")
        }
        if l.isNull || r.isNull { return .null }
        if case .decimal(let a) = l, let b = decimal(r) { return try .value(.decimal(decimalArithmetic(op, a, b))) }
        if case .decimal(let b) = r, let a = decimal(l) { return try .value(.decimal(decimalArithmetic(op, a, b))) }
        if let a = l.integerValue, let b = r.integerValue, op != .divide, op != .power {
            let (result, overflow): (Int64, Bool) =
                switch op {
                case .add: a.addingReportingOverflow(b)
                case .subtract: a.subtractingReportingOverflow(b)
                default: a.multipliedReportingOverflow(by: b)
                }
            if !overflow { return .value(.integer(result)) }
        }
        guard let a = l.doubleValue, let b = r.doubleValue else {
            throw failure("\(op.rawValue) needs numbers, got \(l.kindName) and \(r.kindName)")
        }
        switch op {
        case .add: return .value(.double(a + b))
        case .subtract: return .value(.double(a - b))
        case .multiply: return .value(.double(a * b))
        case .divide:
            guard b != 0 else { throw failure("division by zero") }
            return .value(.double(a / b))
        case .power: return .value(.double(pow(a, b)))
        }
    }

    private func decimal(_ value: AttributeValue) -> Decimal? {
        switch value {
        case .decimal(let d): d
        case .integer(let i): Decimal(i)
        case .double(let d): Decimal(d)
        default: nil
        }
    }

    private func decimalArithmetic(_ op: ArithmeticOperator, _ a: Decimal, _ b: Decimal) throws -> Decimal {
        switch op {
        case .add: return a + b
        case .subtract: return a - b
        case .multiply: return a * b
        case .divide:
            guard !b.isZero else { throw failure("division by zero") }
            return a / b
        case .power:
            guard let exponent = Int(exactly: NSDecimalNumber(decimal: b).doubleValue) else {
                throw failure("a decimal power needs a whole exponent")
            }
            return pow(a, exponent)
        }
    }

    private func number(_ value: MigrationValue, _ name: String) throws -> Double? {
        guard let v = value.attributeValue else { throw failure("\(name) needs a number, got \(value.kindName)") }
        if v.isNull { return nil }
        guard let d = v.doubleValue else { throw failure("\(name) needs a number, got \(v.kindName)") }
        return d
    }

    private func string(_ value: MigrationValue, _ name: String) throws -> String? {
        guard let v = value.attributeValue else { throw failure("\(name) needs a string, got \(value.kindName)") }
        if v.isNull { return nil }
        guard case .string(let s) = v else { throw failure("\(name) needs a string, got \(v.kindName)") }
        return s
    }

    /// The numbers of a collection argument (`sum:({…})`, `max:($source.pages.number)`).
    private func numbers(_ values: [MigrationValue], _ name: String) throws -> [Double] {
        var items = values
        if values.count == 1, case .list(let list) = values[0] { items = list }
        return try items.compactMap { try number($0, name) }
    }

    func function(_ name: String, _ arguments: [MigrationValue]) throws -> MigrationValue {
        func unary(_ f: (Double) -> Double) throws -> MigrationValue {
            try number(arguments[0], name).map { .value(.double(f($0))) } ?? .null
        }
        func binary(_ op: ArithmeticOperator) throws -> MigrationValue { try arithmetic(op, arguments[0], arguments[1]) }
        switch name {
        case "uppercase": return try string(arguments[0], name).map { .value(.string($0.uppercased())) } ?? .null
        case "lowercase": return try string(arguments[0], name).map { .value(.string($0.lowercased())) } ?? .null
        case "length": return try string(arguments[0], name).map { .value(.integer(Int64($0.count))) } ?? .null
        case "add:to": return try binary(.add)
        case "from:subtract": return try binary(.subtract)
        case "multiply:by": return try binary(.multiply)
        case "divide:by": return try binary(.divide)
        case "raise:toPower": return try binary(.power)
        case "modulus:by":
            guard let a = try number(arguments[0], name), let b = try number(arguments[1], name) else { return .null }
            guard b != 0 else { throw failure("modulus by zero") }
            return .value(.double(a.truncatingRemainder(dividingBy: b)))
        case "abs": return try unary { Swift.abs($0) }
        case "floor": return try unary { $0.rounded(.down) }
        case "ceiling": return try unary { $0.rounded(.up) }
        case "trunc": return try unary { $0.rounded(.towardZero) }
        case "sqrt": return try unary { $0.squareRoot() }
        case "now": return .value(.date(Date()))
        case "count":
            if arguments.count == 1, let objects = arguments[0].managedObjects { return .value(.integer(Int64(objects.count))) }
            return .value(.integer(Int64(try numbers(arguments, name).count)))
        case "sum": return .value(.double(try numbers(arguments, name).reduce(0, +)))
        case "min": return try numbers(arguments, name).min().map { .value(.double($0)) } ?? .null
        case "max": return try numbers(arguments, name).max().map { .value(.double($0)) } ?? .null
        case "average":
            let values = try numbers(arguments, name)
            return values.isEmpty ? .null : .value(.double(values.reduce(0, +) / Double(values.count)))
        case FunctionCatalog.cast:
            return try cast(arguments[0], to: try string(arguments[1], name) ?? "")
        default:
            throw failure("the function \(name) is not supported in value expressions")
        }
    }

    private func cast(_ value: MigrationValue, to type: String) throws -> MigrationValue {
        guard let v = value.attributeValue else { throw failure("CAST needs a value, got \(value.kindName)") }
        if v.isNull { return .null }
        switch type {
        case "NSString":
            if case .string = v { return value }
            return .value(.string(v.description))
        case "NSNumber":
            if let d = v.doubleValue { return .value(v.integerValue.map(AttributeValue.integer) ?? .double(d)) }
            if case .string(let s) = v, let d = Double(s) { return .value(Int64(exactly: d).map(AttributeValue.integer) ?? .double(d)) }
        case "NSDecimalNumber":
            if case .string(let s) = v, let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) { return .value(.decimal(d)) }
            if let d = decimal(v) { return .value(.decimal(d)) }
        case "NSDate":
            if case .date = v { return value }
            if let seconds = v.doubleValue { return .value(.date(Date(timeIntervalSinceReferenceDate: seconds))) }
        default:
            throw failure("CAST to \(type) is not supported in value expressions")
        }
        throw failure("\(v.kindName) cannot be cast to \(type)")
    }

    func call(_ target: MigrationValue, _ selector: String, _ arguments: [MigrationValue]) async throws -> MigrationValue {
        if case .manager(let manager) = target {
            return try await manager.call(selector, arguments: arguments)
        }
        if selector == "valueForKeyPath:" || selector == "valueForKey:" {
            guard let path = try string(arguments.first ?? .null, selector) else { return .null }
            return try await evaluate(.variable("__target", keyPath: path.split(separator: ".").map(String.init)), with: target)
        }
        guard let text = try string(target, selector) else { return .null }
        func argument(_ index: Int) throws -> String? { try string(arguments[index], selector) }
        func index(_ i: Int) throws -> Int? {
            guard let v = arguments[i].attributeValue, let n = v.integerValue ?? v.doubleValue.flatMap({ Int64(exactly: $0) }) else {
                throw failure("\(selector) needs a whole number")
            }
            return Int(n)
        }
        switch selector {
        case "stringByAppendingString:":
            return .value(.string(text + (try argument(0) ?? "")))
        case "uppercaseString": return .value(.string(text.uppercased()))
        case "lowercaseString": return .value(.string(text.lowercased()))
        case "substringToIndex:":
            guard let n = try index(0) else { return .null }
            return .value(.string(String(text.prefix(max(0, n)))))
        case "substringFromIndex:":
            guard let n = try index(0) else { return .null }
            return .value(.string(String(text.dropFirst(max(0, n)))))
        case "stringByReplacingOccurrencesOfString:withString:":
            guard let of = try argument(0), let with = try argument(1) else { return .null }
            return .value(.string(text.replacingOccurrences(of: of, with: with)))
        case "componentsSeparatedByString:":
            guard let separator = try argument(0), !separator.isEmpty else { return .list([.value(.string(text))]) }
            return .list(text.components(separatedBy: separator).map { .value(.string($0)) })
        default:
            throw failure("the selector \(selector) is not supported in value expressions")
        }
    }

    private func evaluate(_ expression: Expression, with target: MigrationValue) async throws -> MigrationValue {
        var copy = self
        copy.variables["__target"] = target
        return try await copy.evaluate(expression)
    }
}
