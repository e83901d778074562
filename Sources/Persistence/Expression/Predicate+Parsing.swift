extension Predicate {
    /// Parses a predicate in `NSPredicate` format; `%@`, `%K`, `%d` and `%f` take
    /// `arguments` in order.
    ///
    /// ```swift
    /// let p = try Predicate(format: "title BEGINSWITH[c] %@ AND price < %@", "the", 12.0)
    /// ```
    public init(format: String, _ arguments: FormatArgument...) throws(ExpressionError) {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses a predicate in `NSPredicate` format; `%@`, `%K`, `%d` and `%f` take
    /// `arguments` in order. Too few or too many arguments are errors.
    ///
    /// ```swift
    /// let p = try Predicate(format: "%K IN %@", arguments: ["author", .list(["Ann", "Bo"])])
    /// ```
    public init(format: String, arguments: [FormatArgument]) throws(ExpressionError) {
        var parser = try FormatParser(format: format, arguments: arguments)
        self = try parser.parseWholePredicate()
    }
}

extension Expression {
    /// Parses an expression in `NSExpression` format, such as a mapping model's value
    /// expression.
    ///
    /// ```swift
    /// let e = try Expression(format: "$source.price * 1.04")
    /// ```
    public init(format: String, _ arguments: FormatArgument...) throws(ExpressionError) {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses an expression in `NSExpression` format; placeholders take `arguments` in order.
    ///
    /// ```swift
    /// let e = try Expression(format: "%K * %f", arguments: ["price", 1.04])
    /// ```
    public init(format: String, arguments: [FormatArgument]) throws(ExpressionError) {
        var parser = try FormatParser(format: format, arguments: arguments)
        self = try parser.parseWholeExpression()
    }
}
