extension Predicate {
    /// Parses a predicate in `NSPredicate` format; `%@` and `%K` take `arguments` in order.
    public init(format: String, _ arguments: FormatArgument...) throws(ExpressionError) {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses a predicate in `NSPredicate` format; `%@` and `%K` take `arguments` in order.
    public init(format: String, arguments: [FormatArgument]) throws(ExpressionError) {
        throw ExpressionError(.syntax, "not implemented yet", format: format, offset: 0)
    }

    /// The predicate with `$NAME` variables replaced by values.
    public func substituting(_ variables: [String: AttributeValue]) throws(ExpressionError) -> Predicate {
        self
    }
}

extension Expression {
    /// Parses an expression in `NSExpression` format.
    public init(format: String, _ arguments: FormatArgument...) throws(ExpressionError) {
        throw ExpressionError(.syntax, "not implemented yet", format: format, offset: 0)
    }
}
