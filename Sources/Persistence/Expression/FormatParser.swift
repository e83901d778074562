/// A recursive-descent parser for Apple's `NSPredicate` / `NSExpression` format grammar.
///
/// Predicates (this file), lowest precedence first:
///
///     predicate  := and (("OR" | "||") and)*
///     and        := not (("AND" | "&&") not)*
///     not        := ("NOT" | "!") not | "TRUEPREDICATE" | "FALSEPREDICATE"
///                 | "(" predicate ")" | comparison
///     comparison := ("ANY" | "SOME" | "ALL" | "NONE")? expression operator options? expression
///
/// Expressions are in `FormatParser+Expression.swift`.
///
/// ```swift
/// var parser = try FormatParser(format: "a == 1 OR b == 2", arguments: [])
/// let p = try parser.parseWholePredicate()
/// ```
struct FormatParser {
    let format: String
    let arguments: [FormatArgument]
    let tokens: [FormatToken]
    var position = 0
    /// Nesting depth, bounded so that hostile input cannot overflow the stack.
    var depth = 0
    static let maximumDepth = 200
    /// Where `"(" predicate ")"` has already failed, and how: see ``parseParenthesized()``.
    var failedParentheses: [Int: ExpressionError] = [:]

    init(format: String, arguments: [FormatArgument]) throws(ExpressionError) {
        var lexer = FormatLexer(format: format)
        self.format = format
        self.arguments = arguments
        self.tokens = try lexer.tokens()
    }

    // MARK: Token helpers

    var current: FormatToken { tokens[position] }

    func peek(_ ahead: Int = 1) -> FormatToken {
        tokens[min(position + ahead, tokens.count - 1)]
    }

    mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    func failure(_ code: ExpressionError.Code, _ message: String, at token: FormatToken? = nil) -> ExpressionError {
        ExpressionError(code, message, format: format, offset: (token ?? current).offset)
    }

    /// A `.syntax` error at `token`, or at the current token.
    func failure(_ message: String, at token: FormatToken? = nil) -> ExpressionError {
        failure(.syntax, message, at: token)
    }

    mutating func expect(_ symbol: String, _ what: String) throws(ExpressionError) {
        guard current.isSymbol(symbol) else {
            throw failure("expected '\(symbol)' \(what), found '\(current.display)'")
        }
        advance()
    }

    mutating func enter() throws(ExpressionError) {
        depth += 1
        if depth > Self.maximumDepth { throw failure("format nested too deeply") }
    }

    mutating func leave() { depth -= 1 }

    // MARK: Whole inputs

    /// A predicate followed by the end of the format, every argument used.
    mutating func parseWholePredicate() throws(ExpressionError) -> Predicate {
        let predicate = try parsePredicate()
        try finish()
        return predicate
    }

    /// An expression followed by the end of the format, every argument used.
    mutating func parseWholeExpression() throws(ExpressionError) -> Expression {
        let expression = try parseExpression()
        try finish()
        return expression
    }

    private func finish() throws(ExpressionError) {
        guard case .end = current.kind else {
            throw failure("unexpected '\(current.display)'")
        }
        let used = tokens.reduce(0) { count, token in
            if case .placeholder = token.kind { count + 1 } else { count }
        }
        if arguments.count > used {
            throw failure(.badArgument, "too many arguments: \(arguments.count) given, format uses \(used)")
        }
    }

    // MARK: Predicates

    mutating func parsePredicate() throws(ExpressionError) -> Predicate {
        try enter()
        defer { leave() }
        var terms = [try parseAnd()]
        while current.isKeyword("OR") || current.isSymbol("||") {
            advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(ExpressionError) -> Predicate {
        var terms = [try parseNot()]
        while current.isKeyword("AND") || current.isSymbol("&&") {
            advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws(ExpressionError) -> Predicate {
        if current.isKeyword("NOT") || current.isSymbol("!") {
            advance()
            try enter()
            defer { leave() }
            return .not(try parseNot())
        }
        if current.isKeyword("TRUEPREDICATE") {
            advance()
            return .true
        }
        if current.isKeyword("FALSEPREDICATE") {
            advance()
            return .false
        }
        if current.isSymbol("(") { return try parseParenthesized() }
        return .comparison(try parseComparison())
    }

    /// `(` may open a parenthesised predicate, `(a OR b)`, or an expression, `(a + b) > c`.
    /// Try the predicate first and fall back to a comparison. Each position's failure is
    /// remembered, so nested parentheses cost linear rather than exponential time.
    private mutating func parseParenthesized() throws(ExpressionError) -> Predicate {
        let start = position
        var predicateError: ExpressionError
        if let known = failedParentheses[start] {
            predicateError = known
        } else {
            do {
                advance()
                let inner = try parsePredicate()
                try expect(")", "to close '('")
                if !continuesExpression(current) { return inner }
                predicateError = failure("expected a predicate, found an expression")
            } catch {
                predicateError = error
            }
            failedParentheses[start] = predicateError
            position = start
        }
        do {
            return .comparison(try parseComparison())
        } catch {
            // Report whichever reading got further into the format: that is where it breaks.
            throw (error.offset ?? 0) > (predicateError.offset ?? 0) ? error : predicateError
        }
    }

    /// Whether `token` can follow an expression but not a predicate.
    private func continuesExpression(_ token: FormatToken) -> Bool {
        if comparisonOperator(token) != nil { return true }
        if case .symbol(let s) = token.kind { return ["+", "-", "*", "/", "**", "."].contains(s) }
        return false
    }

    private func comparisonOperator(_ token: FormatToken) -> ComparisonOperator? {
        switch token.kind {
        case .symbol(let s):
            return ComparisonOperator(rawValue: s)
        case .identifier(let name, escaped: false):
            let op = ComparisonOperator(rawValue: name.uppercased())
            // The symbolic raw values are never identifiers, so only the word operators match.
            return op
        default:
            return nil
        }
    }

    private mutating func parseComparison() throws(ExpressionError) -> Comparison {
        var modifier = ComparisonModifier.direct
        if current.isKeyword("ANY") || current.isKeyword("SOME") {
            modifier = .any
        } else if current.isKeyword("ALL") {
            modifier = .all
        } else if current.isKeyword("NONE") {
            modifier = .none
        }
        if modifier != .direct { advance() }

        let lhs = try parseExpression()
        let opToken = current
        guard let op = comparisonOperator(opToken) else {
            if case .end = opToken.kind {
                throw failure("expected a comparison operator, found end of format")
            }
            if case .identifier(let name, _) = opToken.kind {
                throw failure("unknown operator '\(name)'")
            }
            throw failure("expected a comparison operator, found '\(opToken.display)'")
        }
        advance()
        let options = try parseOptions()
        let rhs = try parseExpression()
        if op == .between, case .aggregate(let bounds) = rhs, bounds.count != 2 {
            throw failure("BETWEEN needs two bounds, {low, high}; found \(bounds.count)", at: opToken)
        }
        return Comparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    /// `[c]`, `[d]`, `[cd]` (any order, any case) after an operator.
    private mutating func parseOptions() throws(ExpressionError) -> ComparisonOptions {
        guard current.isSymbol("[") else { return [] }
        let open = current
        advance()
        guard case .identifier(let letters, escaped: false) = current.kind else {
            throw failure("expected comparison options such as [cd], found '\(current.display)'")
        }
        var options: ComparisonOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default: throw failure(.unsupported, "unknown comparison option '\(letter)' in [\(letters)]", at: open)
            }
        }
        advance()
        try expect("]", "to close comparison options")
        return options
    }
}
