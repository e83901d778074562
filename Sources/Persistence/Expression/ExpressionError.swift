/// A predicate or expression format string that cannot be parsed or used.
public struct ExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        public var description: String { base }
        public static let syntax = Code(base: "syntax")
        public static let missingArgument = Code(base: "missingArgument")
        public static let badArgument = Code(base: "badArgument")
        public static let unboundVariable = Code(base: "unboundVariable")
        public static let unknownKeyPath = Code(base: "unknownKeyPath")
        public static let unsupported = Code(base: "unsupported")
        public static let typeMismatch = Code(base: "typeMismatch")
    }

    public var code: Code
    public var message: String
    /// The format string, when the error comes from parsing one.
    public var format: String?
    /// The character offset in `format` where the problem is.
    public var offset: Int?

    public init(_ code: Code, _ message: String, format: String? = nil, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.format = format
        self.offset = offset
    }

    public var description: String {
        guard let format else { return message }
        if let offset { return "\(message) at offset \(offset) in '\(format)'" }
        return "\(message) in '\(format)'"
    }
}
