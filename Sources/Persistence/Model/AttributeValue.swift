import Foundation

/// A value of an attribute, or an argument of a predicate.
///
/// One case per storage class; `Integer 16/32/64` share ``integer(_:)`` and
/// `Double`/`Float` share ``double(_:)``, the attribute's type says which it is.
///
/// ```swift
/// object.setValue(.string("The first book"), forKey: "title")
/// let price: AttributeValue = 10.0
/// ```
public enum AttributeValue: Sendable, Hashable {
    /// No value: a nil attribute or argument.
    case null
    /// An integer, for the `Integer 16`, `Integer 32` and `Integer 64` types.
    case integer(Int64)
    /// A floating-point number, for the `Double` and `Float` types.
    case double(Double)
    /// A decimal number, for the `Decimal` type.
    case decimal(Decimal)
    /// A string, for the `String` type.
    case string(String)
    /// A Boolean, for the `Boolean` type.
    case bool(Bool)
    /// A date, for the `Date` type.
    case date(Date)
    /// Bytes, for the `Binary` type and for a `Transformable` attribute's stored value.
    case binary(Data)
    /// A UUID, for the `UUID` type.
    case uuid(UUID)
    /// A URL, for the `URI` type.
    case uri(URL)

    /// Whether it is ``AttributeValue/null``.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The value as a `Double` if it is a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .double(let v): v
        case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
        case .bool(let v): v ? 1 : 0
        default: nil
        }
    }

    /// The value as an `Int64` if it is an integer (or a boolean).
    public var integerValue: Int64? {
        switch self {
        case .integer(let v): v
        case .bool(let v): v ? 1 : 0
        default: nil
        }
    }

    /// The text of a string value; `nil` for any other kind.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }

    /// A short name of the case, for error messages.
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .integer: "integer"
        case .double: "floating-point number"
        case .decimal: "decimal"
        case .string: "string"
        case .bool: "boolean"
        case .date: "date"
        case .binary: "binary data"
        case .uuid: "UUID"
        case .uri: "URI"
        }
    }
}

extension AttributeValue: ExpressibleByNilLiteral, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    /// ``AttributeValue/null``, from `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// A string value, from a string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value, from an integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A floating-point value, from a floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean value, from `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension AttributeValue: CustomStringConvertible {
    /// The value for messages: strings in quotes, Booleans as `YES` and `NO`, binary data by its byte count.
    public var description: String {
        switch self {
        case .null: "nil"
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .decimal(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .bool(let v): v ? "YES" : "NO"
        case .date(let v): "\(v)"
        case .binary(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        case .uri(let v): v.absoluteString
        }
    }
}
