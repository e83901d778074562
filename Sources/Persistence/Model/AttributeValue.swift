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
    case null
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case bool(Bool)
    case date(Date)
    case binary(Data)
    case uuid(UUID)
    case uri(URL)

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
    public init(nilLiteral: ()) { self = .null }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension AttributeValue: CustomStringConvertible {
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
