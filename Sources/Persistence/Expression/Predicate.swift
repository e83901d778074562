/// A filter in `NSPredicate` format, parsed into a tree.
///
/// ```swift
/// let p = try Predicate(format: "title BEGINSWITH[c] %@ AND price < %@", "the", 12.0)
/// ```
public indirect enum Predicate: Sendable, Hashable {
    /// `TRUEPREDICATE`: matches every object.
    case `true`
    /// `FALSEPREDICATE`: matches no object.
    case `false`
    /// `a AND b AND …`: matches when every operand does (an empty list matches everything).
    case and([Predicate])
    /// `a OR b OR …`: matches when any operand does (an empty list matches nothing).
    case or([Predicate])
    /// `NOT a`: matches when the operand does not.
    case not(Predicate)
    /// A comparison of two expressions, as `price < 12`.
    case comparison(Comparison)
}

/// One comparison of a predicate: `lhs op[options] rhs`, optionally with `ANY`/`ALL`/`NONE`.
public struct Comparison: Sendable, Hashable {
    /// The left-hand side, usually a key path.
    public var lhs: Expression
    /// The operator.
    public var op: ComparisonOperator
    /// The right-hand side, usually a constant or a substituted argument.
    public var rhs: Expression
    /// `[c]`, `[d]` or `[cd]` on a string comparison.
    public var options: ComparisonOptions
    /// `ANY`, `ALL` or `NONE` before a to-many key path on the left; ``ComparisonModifier/direct`` otherwise.
    public var modifier: ComparisonModifier

    /// A comparison `lhs op rhs`, with no options and no modifier unless given.
    ///
    /// ```swift
    /// let cheap = Predicate.comparison(Comparison(.keyPath(["price"]), .lessThan, .constant(.double(12))))
    /// ```
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

/// The operators of a comparison, named as `NSPredicate`'s format writes them (the raw value).
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==` (also written `=`): equal values.
    case equal = "=="
    /// `!=` (also written `<>`): different values.
    case notEqual = "!="
    /// `<`: the left is smaller.
    case lessThan = "<"
    /// `<=` (also written `=<`): the left is smaller or equal.
    case lessThanOrEqual = "<="
    /// `>`: the left is larger.
    case greaterThan = ">"
    /// `>=` (also written `=>`): the left is larger or equal.
    case greaterThanOrEqual = ">="
    /// `BEGINSWITH`: the left string starts with the right one.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: the left string ends with the right one.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: the left string contains the right one.
    case contains = "CONTAINS"
    /// `LIKE`: the left string matches a pattern with `*` (any characters) and `?` (one character).
    case like = "LIKE"
    /// `MATCHES`: the left string matches a regular expression, as a whole.
    case matches = "MATCHES"
    /// `IN`: the left value is one of the right collection's (`{1, 2}` or an `IN %@` list).
    case `in` = "IN"
    /// `BETWEEN`: the left value lies within `{lower, upper}`, bounds included.
    case between = "BETWEEN"
}

/// `[c]`, `[d]` and `[cd]` after a string operator.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The options' bits: 1 for `[c]`, 2 for `[d]`.
    public let rawValue: Int
    /// The options with these bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// `ANY`, `ALL`, `NONE` before a to-many key path; `.direct` otherwise.
public enum ComparisonModifier: String, Sendable, Hashable {
    /// No modifier: the comparison is made once, on the left value itself.
    case direct
    /// `ANY`: some destination of the to-many matches.
    case any = "ANY"
    /// `ALL`: every destination of the to-many matches.
    case all = "ALL"
    /// `NONE`: no destination of the to-many matches.
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
    /// A string argument: a key path for `%K`, a string value for `%@`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// A floating-point value.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// A Boolean value.
    public init(booleanLiteral value: Bool) { self = .value(.bool(value)) }
    /// A nil value, for `== %@` with `nil`.
    public init(nilLiteral: ()) { self = .value(.null) }
}
