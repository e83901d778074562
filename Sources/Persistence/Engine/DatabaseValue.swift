import Foundation

/// A value as a SQL database stores it: the storage classes both SQLite and PostgreSQL bind.
public enum DatabaseValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit integer (Booleans and `Z_PK` keys too).
    case integer(Int64)
    /// A double-precision floating-point number.
    case double(Double)
    /// A string.
    case text(String)
    /// Bytes.
    case blob(Data)

    /// Whether it is SQL `NULL`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The value as an integer: an integer, a whole floating-point number, or text that reads as one; `nil` otherwise.
    public var int64: Int64? {
        switch self {
        case .integer(let v): v
        case .double(let v): Int64(exactly: v.rounded()) ?? nil
        case .text(let v): Int64(v)
        default: nil
        }
    }

    /// The value as a `Double`: a number, or text that reads as one; `nil` otherwise.
    public var double: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .double(let v): v
        case .text(let v): Double(v)
        default: nil
        }
    }

    /// The value as text: a string, a number written out, or bytes that are UTF-8; `nil` for `NULL` or other bytes.
    public var text: String? {
        switch self {
        case .text(let v): v
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .blob(let v): String(data: v, encoding: .utf8)
        case .null: nil
        }
    }

    /// The value as bytes: a blob, or a string's UTF-8; `nil` otherwise.
    public var blob: Data? {
        switch self {
        case .blob(let v): v
        case .text(let v): Data(v.utf8)
        default: nil
        }
    }
}
