import Foundation

/// Converts attribute values to and from what the database stores, per attribute type.
///
/// On SQLite, Core Data's conventions: dates as seconds since 2001-01-01, booleans as 0/1,
/// UUIDs as 16-byte blobs; decimals as their exact decimal text. On PostgreSQL, the
/// column's own type: see ``postgresValue(_:type:)``.
///
/// ```swift
/// ValueCoding.databaseValue(.bool(true), type: .boolean, dialect: .sqlite)    // .integer(1)
/// ValueCoding.databaseValue(.bool(true), type: .boolean, dialect: .postgres)  // .text("true")
/// ```
public enum ValueCoding {
    /// The stored form of a value of an attribute of type `type`.
    public static func databaseValue(_ value: AttributeValue, type: AttributeType, dialect: SQLDialect) -> DatabaseValue {
        if dialect.engine == .postgres { return postgresValue(value, type: type) }
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
            return value.double.map { double in .decimal(Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(double)) } ?? .null
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
        case .binary, .transformable:
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

    /// The stored form on PostgreSQL, where a column has the attribute's own type.
    ///
    /// Values go as `int8`, `float8` or `bytea`, or as text the server reads as the column's
    /// type: booleans `true`/`false`, dates as timestamps (microseconds kept), UUIDs in
    /// canonical form, decimals with every digit. Values of another kind than the
    /// attribute's are converted the way SQLite would store them, where that makes sense.
    public static func postgresValue(_ value: AttributeValue, type: AttributeType) -> DatabaseValue {
        switch (value, type) {
        case (.null, _): return .null
        case (_, .boolean):
            if let flag = value.integerValue ?? value.doubleValue.map({ Int64($0) }) { return .text(flag == 0 ? "false" : "true") }
        case (.date(let v), .date):
            return .text(PostgresTimestamp.text(secondsSinceReferenceDate: v.timeIntervalSinceReferenceDate))
        case (_, .date):
            // A number is seconds since 2001-01-01, as a date is in a SQLite store.
            if let seconds = value.doubleValue { return .text(PostgresTimestamp.text(secondsSinceReferenceDate: seconds)) }
        case (.uuid(let v), _):
            return .text(v.uuidString.lowercased())
        case (.binary(let v), .uuid) where v.count == 16:
            return .text(UUID(uuid: v.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString.lowercased())
        case (.bool(let v), _):
            return .integer(v ? 1 : 0)
        default: break
        }
        return databaseValue(value, type: type, dialect: .sqlite)
    }
}
