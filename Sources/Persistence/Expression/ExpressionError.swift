/// A predicate or expression format string that cannot be parsed or used.
public struct ExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem an expression error is, for code that handles some kinds itself.
    ///
    /// ```swift
    /// do { _ = try Predicate(format: userText) } catch where error.code == .syntax {
    ///     print("not a predicate: \(error)") // the message, then where: "… at offset 7 in '…'"
    /// }
    /// ```
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        /// The code's name, as `unboundVariable`.
        public var description: String { base }
        /// The format string (or an archived expression) cannot be parsed: fix the text at ``ExpressionError/offset``.
        public static let syntax = Code(base: "syntax")
        /// The format has more `%@`/`%K` than arguments were given: pass one argument per specifier.
        public static let missingArgument = Code(base: "missingArgument")
        /// An argument does not fit its specifier (a `%K` that is not a key path), or more arguments were given than the format uses.
        public static let badArgument = Code(base: "badArgument")
        /// A `$VARIABLE` has no value when the predicate is used: pass it in the fetch request's `substitutionVariables`.
        public static let unboundVariable = Code(base: "unboundVariable")
        /// A key path names a property the entity does not have: check the spelling against the model.
        public static let unknownKeyPath = Code(base: "unknownKeyPath")
        /// The expression is valid `NSPredicate`/`NSExpression` syntax but cannot run here (a `FUNCTION` selector, a function
        /// that needs a value, …): rewrite it with what the documentation lists as supported.
        public static let unsupported = Code(base: "unsupported")
        /// Values of kinds that cannot be compared or computed together, as a string in arithmetic or a `CAST` to an unknown type.
        public static let typeMismatch = Code(base: "typeMismatch")
    }

    /// What kind of problem it is.
    public var code: Code
    /// What is wrong, in a sentence.
    public var message: String
    /// The format string, when the error comes from parsing one.
    public var format: String?
    /// The character offset in `format` where the problem is.
    public var offset: Int?

    /// An error of kind `code`; `format` and `offset` say where, when it comes from parsing a format string.
    public init(_ code: Code, _ message: String, format: String? = nil, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.format = format
        self.offset = offset
    }

    /// The message, followed by the offset and the format string when known.
    public var description: String {
        guard let format else { return message }
        if let offset { return "\(message) at offset \(offset) in '\(format)'" }
        return "\(message) in '\(format)'"
    }
}
