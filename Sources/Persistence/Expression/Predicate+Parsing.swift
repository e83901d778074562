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
    /// The grammar is Apple's: `AND`/`&&`, `OR`/`||`, `NOT`/`!` (binding NOT > AND > OR),
    /// `TRUEPREDICATE`, `FALSEPREDICATE`, the comparison operators with `[c]`/`[d]`/`[cd]`
    /// (accepted after any operator, as Apple accepts `==[c]`), `ANY`/`SOME`/`ALL`/`NONE`,
    /// keywords in any case, `#word` for a key spelled like a keyword. Placeholders:
    /// `%@` takes a value, string, list (an aggregate) or object; `%K` a string key path;
    /// `%d`/`%i`/`%ld` an integer; `%f`/`%lf` a number.
    ///
    /// This package's additions and limits:
    /// - `CAST` of a literal to `NSDate`, `NSDecimalNumber`, `NSUUID`, `NSURL`, `NSData` or
    ///   `NSManagedObjectID` is folded into the value, so every value has a spelling;
    /// - `SUBQUERY`, `FETCH`, `ANYKEY` and indexing (`a[FIRST]`, `a[SIZE]`) are not supported
    ///   and throw `.unsupported`; unknown function names throw `.unsupported` too;
    /// - error offsets count Unicode scalars from the start of `format`;
    /// - nesting deeper than 200 levels is an error rather than a stack overflow.
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
