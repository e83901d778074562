/// How a SQL engine spells names, placeholders and column types.
///
/// Core Data's SQLite stores use upper-case names (`ZBOOK`, `Z_PK`); the PostgreSQL store
/// uses the same names in lower case, which PostgreSQL needs no quotes for.
public struct SQLDialect: Sendable, Hashable {
    public enum Engine: String, Sendable, Hashable {
        case sqlite
        case postgres
    }

    public let engine: Engine

    public static let sqlite = SQLDialect(engine: .sqlite)
    public static let postgres = SQLDialect(engine: .postgres)

    /// A table or column name as this engine stores it.
    public func name(_ coreDataName: String) -> String {
        engine == .postgres ? coreDataName.lowercased() : coreDataName
    }

    /// The placeholder for the `index`th (1-based) argument of a statement.
    public func placeholder(_ index: Int) -> String {
        engine == .postgres ? "$\(index)" : "?"
    }

    /// The column type for an attribute type: Core Data's names on SQLite, PostgreSQL's
    /// own types there (dates as `timestamp with time zone`, decimals as exact `numeric`).
    public func columnType(for type: AttributeType) -> String {
        switch engine {
        case .sqlite:
            switch type {
            case .integer16, .integer32, .integer64, .boolean: "INTEGER"
            case .double, .float: "FLOAT"
            // Text affinity keeps every digit; NUMERIC affinity would round to a double.
            case .decimal: "DECIMAL TEXT"
            case .string, .uri: "VARCHAR"
            case .date: "TIMESTAMP"
            case .binary, .uuid, .transformable: "BLOB"
            }
        case .postgres:
            switch type {
            case .integer16: "smallint"
            case .integer32: "integer"
            case .integer64: "bigint"
            case .boolean: "boolean"
            case .double: "double precision"
            case .float: "real"
            case .decimal: "numeric"
            case .string, .uri: "text"
            case .date: "timestamp with time zone"
            case .binary, .transformable: "bytea"
            case .uuid: "uuid"
            }
        }
    }
}
