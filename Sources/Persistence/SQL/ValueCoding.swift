import Foundation

/// Converts stored values back to attribute values, per attribute type; the stored form of
/// a value is the dialect's (``SQLDialect/databaseValue(_:type:)``).
///
/// ```swift
/// ValueCoding.attributeValue(.integer(1), type: .boolean)      // .bool(true)
/// SQLiteDialect().databaseValue(.bool(true), type: .boolean)   // .integer(1)
/// ```
public enum ValueCoding {
    /// The stored form of a value of an attribute of type `type`.
    @available(*, deprecated, message: "ask the dialect: dialect.databaseValue(value, type: type)")
    public static func databaseValue(_ value: AttributeValue, type: AttributeType, dialect: some SQLDialect) -> DatabaseValue {
        dialect.databaseValue(value, type: type)
    }

    /// A value in the form Core Data stores it in a SQLite store: dates as seconds since
    /// 2001-01-01, booleans as 0/1, UUIDs as 16-byte blobs, decimals as their exact text;
    /// a value of another kind than the attribute's converted as SQLite would store it.
    public static func coreDataValue(_ value: AttributeValue, type: AttributeType) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let v):
            switch type {
            case .double, .float: return .double(Double(v))
            case .decimal: return .text(String(v))
            case .boolean: return .integer(v == 0 ? 0 : 1)
            default: return .integer(v)
            }
        case .double(let v):
            switch type {
            case .integer16, .integer32, .integer64, .boolean: return .integer(Int64(v))
            case .decimal: return .text(Decimal(v).description)
            default: return .double(v)
            }
        case .decimal(let v):
            switch type {
            case .decimal: return .text(v.description)
            case .double, .float: return .double(NSDecimalNumber(decimal: v).doubleValue)
            default: return .integer(NSDecimalNumber(decimal: v).int64Value)
            }
        case .string(let v): return .text(v)
        case .bool(let v): return .integer(v ? 1 : 0)
        case .date(let v): return .double(v.timeIntervalSinceReferenceDate)
        case .binary(let v): return .blob(v)
        case .uuid(let v): return .blob(withUnsafeBytes(of: v.uuid) { Data($0) })
        case .uri(let v): return .text(v.absoluteString)
        }
    }

    /// The attribute value of a stored value of an attribute of type `type`.
    public static func attributeValue(_ value: DatabaseValue, type: AttributeType) -> AttributeValue {
        if value.isNull { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            return value.int64.map(AttributeValue.integer) ?? .null
        case .double, .float:
            return value.double.map(AttributeValue.double) ?? .null
        case .decimal:
            if case .text(let text) = value, let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) {
                return .decimal(decimal)
            }
            if case .integer(let v) = value { return .decimal(Decimal(v)) }
            // A REAL (as Core Data stores decimals) through its shortest text, the value that
            // was written: Decimal(Double) would keep the binary noise (0.1 → 0.1000000000000000512).
            return value.double.map { double in .decimal(Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(double)) }
                ?? .null
        case .string:
            return value.text.map(AttributeValue.string) ?? .null
        case .boolean:
            if case .text(let text) = value { return .bool(text == "t" || text == "true" || text == "1") }
            return value.int64.map { .bool($0 != 0) } ?? .null
        case .date:
            // PostgreSQL's timestamps arrive as seconds too; text is a timestamp's text form.
            if case .text(let text) = value, let seconds = PostgresTimestamp.secondsSinceReferenceDate(text: text) {
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            return value.double.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        // Only a transient is Undefined and never stored; should its value come from a
        // database anyway (a key path's SQL), it is read as the bytes it is.
        case .binary, .transformable, .undefined:
            return value.blob.map(AttributeValue.binary) ?? .null
        case .uuid:
            switch value {
            case .blob(let data) where data.count == 16:
                let uuid = data.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
                return .uuid(UUID(uuid: uuid))
            case .text(let text): return UUID(uuidString: text).map(AttributeValue.uuid) ?? .null
            default: return .null
            }
        case .uri:
            return value.text.flatMap { URL(string: $0) }.map(AttributeValue.uri) ?? .null
        }
    }

    /// The stored form on PostgreSQL.
    @available(*, deprecated, message: "ask the dialect: PostgresDialect().databaseValue(value, type: type)")
    public static func postgresValue(_ value: AttributeValue, type: AttributeType) -> DatabaseValue {
        PostgresDialect().databaseValue(value, type: type)
    }
}
