extension Predicate {
    /// The predicate with each `$NAME` variable replaced by `.constant(variables[NAME])`.
    ///
    /// A bare `$NAME` with no value in `variables` is an `.unboundVariable` error. A variable
    /// followed by a key path, such as `$source.title` in a migration value expression, is
    /// left as it is when unbound: those are bound to objects while a migration runs, not to
    /// values. Binding one to a value is a `.typeMismatch` error, since a value has no keys.
    ///
    /// ```swift
    /// let p = try Predicate(format: "price < $MAX").substituting(["MAX": 10.0])
    /// // price < 10.0
    /// ```
    public func substituting(_ variables: [String: AttributeValue]) throws(ExpressionError) -> Predicate {
        switch self {
        case .true, .false:
            return self
        case .and(let terms):
            var result: [Predicate] = []
            for term in terms { result.append(try term.substituting(variables)) }
            return .and(result)
        case .or(let terms):
            var result: [Predicate] = []
            for term in terms { result.append(try term.substituting(variables)) }
            return .or(result)
        case .not(let term):
            return .not(try term.substituting(variables))
        case .comparison(var comparison):
            comparison.lhs = try comparison.lhs.substituting(variables)
            comparison.rhs = try comparison.rhs.substituting(variables)
            return .comparison(comparison)
        }
    }
}

extension Expression {
    /// The expression with `$NAME` variables replaced by constants; see
    /// ``Predicate/substituting(_:)`` for the rules.
    ///
    /// ```swift
    /// let e = try Expression(format: "$RATE * 2").substituting(["RATE": 1.5])
    /// // .arithmetic(.multiply, .constant(.double(1.5)), .constant(.integer(2)))
    /// ```
    public func substituting(_ variables: [String: AttributeValue]) throws(ExpressionError) -> Expression {
        func all(_ list: [Expression]) throws(ExpressionError) -> [Expression] {
            var result: [Expression] = []
            for item in list { result.append(try item.substituting(variables)) }
            return result
        }
        switch self {
        case .constant, .keyPath, .evaluatedObject, .object:
            return self
        case .variable(let name, let path):
            guard let value = variables[name] else {
                if path.isEmpty {
                    throw ExpressionError(.unboundVariable, "no value for variable $\(name)")
                }
                return self
            }
            guard path.isEmpty else {
                throw ExpressionError(
                    .typeMismatch,
                    "$\(name) is bound to a value, which has no key path '\(path.joined(separator: "."))'"
                )
            }
            return .constant(value)
        case .arithmetic(let op, let lhs, let rhs):
            return .arithmetic(op, try lhs.substituting(variables), try rhs.substituting(variables))
        case .function(let name, let arguments):
            return .function(name, try all(arguments))
        case .functionCall(let target, let selector, let arguments):
            return .functionCall(
                target: try target.substituting(variables),
                selector: selector,
                arguments: try all(arguments)
            )
        case .aggregate(let items):
            return .aggregate(try all(items))
        }
    }
}
