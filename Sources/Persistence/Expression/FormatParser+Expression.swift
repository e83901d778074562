/// Expressions, lowest precedence first:
///
///     expression     := multiplicative (("+" | "-") multiplicative)*
///     multiplicative := unary (("*" | "/") unary)*
///     unary          := "-" unary | power
///     power          := postfix ("**" unary)?        -- right-associative
///     postfix        := primary ("." key)*
///     primary        := literal | key | "SELF" | "$name" | "%@" | "%K" | "%d" | "%f"
///                     | "(" expression ")" | "{" expressions "}" | function
///                     | "FUNCTION(" target "," selector ("," argument)* ")"
///                     | "CAST(" expression "," type ")"
///
/// ```swift
/// var parser = try FormatParser(format: "$source.price * 1.04", arguments: [])
/// let e = try parser.parseWholeExpression()
/// ```
extension FormatParser {
    mutating func parseExpression() throws(ExpressionError) -> Expression {
        try enter()
        defer { leave() }
        var result = try parseMultiplicative()
        while let op = current.isSymbol("+")
            ? ArithmeticOperator.add
            : current.isSymbol("-") ? .subtract : nil
        {
            advance()
            result = .arithmetic(op, result, try parseMultiplicative())
        }
        return result
    }

    private mutating func parseMultiplicative() throws(ExpressionError) -> Expression {
        var result = try parseUnary()
        while let op = current.isSymbol("*")
            ? ArithmeticOperator.multiply
            : current.isSymbol("/") ? .divide : nil
        {
            advance()
            result = .arithmetic(op, result, try parseUnary())
        }
        return result
    }

    /// Unary minus of a number is folded into a negative constant, so `-5` is
    /// `.constant(.integer(-5))` and prints back as `-5`; of anything else it is `0 - x`.
    private mutating func parseUnary() throws(ExpressionError) -> Expression {
        guard current.isSymbol("-") else { return try parsePower() }
        advance()
        // -9223372036854775808 is an Int64, though its magnitude alone is not.
        if case .integer(let magnitude) = current.kind, magnitude == UInt64(Int64.max) + 1,
            !peek().isSymbol("**")
        {
            advance()
            return .constant(.integer(.min))
        }
        try enter()
        defer { leave() }
        let operand = try parseUnary()
        switch operand {
        case .constant(.integer(let v)):
            let (negated, overflow) = Int64(0).subtractingReportingOverflow(v)
            return .constant(overflow ? .double(-Double(v)) : .integer(negated))
        case .constant(.double(let v)):
            return .constant(.double(-v))
        case .constant(.decimal(let v)):
            return .constant(.decimal(-v))
        default:
            return .arithmetic(.subtract, .constant(.integer(0)), operand)
        }
    }

    private mutating func parsePower() throws(ExpressionError) -> Expression {
        let base = try parsePostfix()
        guard current.isSymbol("**") else { return base }
        advance()
        try enter()
        defer { leave() }
        return .arithmetic(.power, base, try parseUnary())
    }

    /// `.key` after a primary. Key paths and variables grow; other expressions get a
    /// `valueForKeyPath:` call, because `Expression` has no case for "key path of a value".
    private mutating func parsePostfix() throws(ExpressionError) -> Expression {
        var result = try parsePrimary()
        while current.isSymbol(".") {
            advance()
            let key = try parseKey()
            switch result {
            case .keyPath(let path):
                result = .keyPath(path + [key])
            case .evaluatedObject:
                result = .keyPath([key])
            case .variable(let name, let path):
                result = .variable(name, keyPath: path + [key])
            case .functionCall(let target, "valueForKeyPath:", let arguments)
            where arguments.count == 1 && arguments[0].stringConstant != nil:
                let path = arguments[0].stringConstant! + "." + key
                result = .functionCall(
                    target: target,
                    selector: "valueForKeyPath:",
                    arguments: [.constant(.string(path))]
                )
            default:
                result = .functionCall(
                    target: result,
                    selector: "valueForKeyPath:",
                    arguments: [.constant(.string(key))]
                )
            }
        }
        return result
    }

    /// A key after a dot: any name, keywords included (there is no ambiguity there),
    /// `#escaped` or `@operator`.
    private mutating func parseKey() throws(ExpressionError) -> String {
        guard case .identifier(let name, _) = current.kind else {
            throw failure("expected a key after '.', found '\(current.display)'")
        }
        advance()
        return name
    }

    private mutating func parsePrimary() throws(ExpressionError) -> Expression {
        let token = current
        switch token.kind {
        case .integer(let magnitude):
            advance()
            return .constant(magnitude <= UInt64(Int64.max) ? .integer(Int64(magnitude)) : .double(Double(magnitude)))
        case .double(let value):
            advance()
            return .constant(.double(value))
        case .string(let value):
            advance()
            return .constant(.string(value))
        case .variable(let name):
            advance()
            return .variable(name, keyPath: [])
        case .placeholder(let spec, let index):
            advance()
            return try substitute(spec, argument: index, at: token)
        case .identifier(let name, let escaped):
            if escaped {
                advance()
                return .keyPath([name])
            }
            return try parseName(name, at: token)
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expect(")", "to close '('")
            return inner
        case .symbol("{"):
            advance()
            return .aggregate(try parseList(closing: "}"))
        case .end:
            throw failure("expected an expression, found end of format")
        case .symbol:
            throw failure("expected an expression, found '\(token.display)'")
        }
    }

    /// A bare name: a keyword literal, `SELF`, a function, `FUNCTION`, `CAST` or a key.
    private mutating func parseName(_ name: String, at token: FormatToken) throws(ExpressionError) -> Expression {
        switch name.uppercased() {
        case "TRUE", "YES":
            advance()
            return .constant(.bool(true))
        case "FALSE", "NO":
            advance()
            return .constant(.bool(false))
        case "NIL", "NULL":
            advance()
            return .constant(.null)
        case "SELF":
            advance()
            return .evaluatedObject
        case "FUNCTION" where peek().isSymbol("("): return try parseFunctionCall()
        case "CAST" where peek().isSymbol("("): return try parseCast()
        case "SUBQUERY", "FETCH", "ANYKEY", "FIRST", "LAST", "SIZE":
            throw failure(.unsupported, "\(name.uppercased()) is not supported")
        default: break
        }
        if FormatKeywords.isReserved(name) {
            throw failure("expected an expression, found keyword '\(name)' (write #\(name) for a key named so)")
        }
        if peek().isSymbol("(") || peek().isSymbol(":") {
            return try parseFunction()
        }
        advance()
        return .keyPath([name])
    }

    /// `uppercase:(x)`, `uppercase(x)`, `add:to:(1, 2)`, `now()`. Names are stored without
    /// the trailing colon: `.function("add:to", …)`.
    private mutating func parseFunction() throws(ExpressionError) -> Expression {
        let start = current
        var parts: [String] = []
        while case .identifier(let part, escaped: false) = current.kind {
            parts.append(part)
            advance()
            guard current.isSymbol(":") else { break }
            advance()
        }
        let name = parts.joined(separator: ":")
        guard current.isSymbol("(") else {
            throw failure("expected '(' after function name '\(name):', found '\(current.display)'")
        }
        guard let arity = FunctionCatalog.arity[name] else {
            throw failure(.unsupported, "unknown function '\(name)'", at: start)
        }
        advance()
        let arguments = try parseList(closing: ")")
        guard arity.contains(arguments.count) else {
            throw failure("function '\(name)' takes \(FunctionCatalog.describe(arity)), found \(arguments.count)", at: start)
        }
        if name == FunctionCatalog.cast { return try FunctionCatalog.foldCast(arguments, parser: self, at: start) }
        return .function(name, arguments)
    }

    /// `FUNCTION(target, "selector:with:", args…)`.
    private mutating func parseFunctionCall() throws(ExpressionError) -> Expression {
        let start = current
        advance()
        advance()
        let arguments = try parseList(closing: ")")
        guard arguments.count >= 2 else {
            throw failure("FUNCTION needs a target and a selector", at: start)
        }
        guard case .constant(.string(let selector)) = arguments[1], !selector.isEmpty else {
            throw failure(.typeMismatch, "the selector of FUNCTION must be a string", at: start)
        }
        return .functionCall(target: arguments[0], selector: selector, arguments: Array(arguments.dropFirst(2)))
    }

    /// `CAST(value, "NSDate")`: see ``FunctionCatalog/foldCast(_:parser:at:)``.
    private mutating func parseCast() throws(ExpressionError) -> Expression {
        let start = current
        advance()
        advance()
        let arguments = try parseList(closing: ")")
        guard arguments.count == 2 else {
            throw failure("CAST takes a value and a type name, found \(arguments.count) arguments", at: start)
        }
        return try FunctionCatalog.foldCast(arguments, parser: self, at: start)
    }

    /// Comma-separated expressions up to `closing`, which is consumed; may be empty.
    private mutating func parseList(closing: String) throws(ExpressionError) -> [Expression] {
        var items: [Expression] = []
        if current.isSymbol(closing) {
            advance()
            return items
        }
        while true {
            items.append(try parseExpression())
            if current.isSymbol(closing) {
                advance()
                return items
            }
            guard current.isSymbol(",") else {
                throw failure("expected ',' or '\(closing)', found '\(current.display)'")
            }
            advance()
        }
    }

    /// The expression for the `index`th argument, as `%spec` wants it.
    private func substitute(_ spec: String, argument index: Int, at token: FormatToken) throws(ExpressionError) -> Expression {
        guard index < arguments.count else {
            throw failure(.missingArgument, "missing argument for %\(spec): \(arguments.count) given", at: token)
        }
        let argument = arguments[index]
        switch (spec, argument) {
        case ("@", .value(let v)): return .constant(v)
        case ("@", .string(let s)): return .constant(.string(s))
        case ("@", .list(let values)): return .aggregate(values.map { .constant($0) })
        case ("@", .object(let id)): return .object(id)
        case ("K", .string(let s)), ("K", .value(.string(let s))):
            let path = s.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !path.contains(where: \.isEmpty) else {
                throw failure(.badArgument, "argument for %K is not a key path: \"\(s)\"", at: token)
            }
            return .keyPath(path)
        case ("K", _):
            throw failure(.badArgument, "argument for %K must be a string key path, found \(Self.describe(argument))", at: token)
        case ("d", .value(.integer(let v))): return .constant(.integer(v))
        case ("f", .value(.double(let v))): return .constant(.double(v))
        case ("f", .value(.integer(let v))): return .constant(.double(Double(v)))
        default:
            let wanted = spec == "d" ? "an integer" : "a number"
            throw failure(.badArgument, "argument for %\(spec) must be \(wanted), found \(Self.describe(argument))", at: token)
        }
    }

    private static func describe(_ argument: FormatArgument) -> String {
        switch argument {
        case .value(let v): v.kindName
        case .list: "list"
        case .object: "object"
        case .string: "string"
        }
    }
}

extension Expression {
    /// The string if this is a string constant.
    var stringConstant: String? {
        if case .constant(.string(let s)) = self { s } else { nil }
    }
}
