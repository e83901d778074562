import Foundation

/// A value as a SQL database stores it: the storage classes both SQLite and PostgreSQL bind.
public enum DatabaseValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    case blob(Data)

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var int64: Int64? {
        switch self {
        case .integer(let v): v
        case .double(let v): Int64(exactly: v.rounded()) ?? nil
        case .text(let v): Int64(v)
        default: nil
        }
    }

    public var double: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .double(let v): v
        case .text(let v): Double(v)
        default: nil
        }
    }

    public var text: String? {
        switch self {
        case .text(let v): v
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .blob(let v): String(data: v, encoding: .utf8)
        case .null: nil
        }
    }

    public var blob: Data? {
        switch self {
        case .blob(let v): v
        case .text(let v): Data(v.utf8)
        default: nil
        }
    }
}
