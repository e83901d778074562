/// A filter in `NSPredicate` format, parsed into a tree.
///
/// ```swift
/// let p = try Predicate(format: "title BEGINSWITH[c] %@ AND price < %@", "the", 12.0)
/// ```
public indirect enum Predicate: Sendable, Hashable {
    case `true`
    case `false`
    case and([Predicate])
    case or([Predicate])
    case not(Predicate)
    case comparison(Comparison)
}

/// One comparison of a predicate: `lhs op[options] rhs`, optionally with `ANY`/`ALL`/`NONE`.
public struct Comparison: Sendable, Hashable {
    public var lhs: Expression
    public var op: ComparisonOperator
    public var rhs: Expression
    public var options: ComparisonOptions
    public var modifier: ComparisonModifier

    public init(
        _ lhs: Expression,
        _ op: ComparisonOperator,
        _ rhs: Expression,
        options: ComparisonOptions = [],
        modifier: ComparisonModifier = .direct
    ) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
        self.modifier = modifier
    }
}

public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case lessThan = "<"
    case lessThanOrEqual = "<="
    case greaterThan = ">"
    case greaterThanOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"
    case `in` = "IN"
    case between = "BETWEEN"
}

/// `[c]`, `[d]` and `[cd]` after a string operator.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// `ANY`, `ALL`, `NONE` before a to-many key path; `.direct` otherwise.
public enum ComparisonModifier: String, Sendable, Hashable {
    case direct
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// An argument for a `%@` or `%K` in a predicate or expression format string.
public enum FormatArgument: Sendable, Hashable {
    /// A value for `%@`.
    case value(AttributeValue)
    /// A list of values for `IN %@`.
    case list([AttributeValue])
    /// An object for `relationship == %@`.
    case object(ObjectID)
    /// A key path for `%K`, or a string used as a value for `%@`.
    case string(String)
}

extension FormatArgument: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    public init(booleanLiteral value: Bool) { self = .value(.bool(value)) }
    public init(nilLiteral: ()) { self = .value(.null) }
}
