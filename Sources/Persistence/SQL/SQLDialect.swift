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

    /// The most arguments one statement may take on this engine, with the oldest client
    /// library the framework supports. Every statement whose argument count grows with its
    /// input (multi-row `INSERT`s, `IN` lists) is cut to it through
    /// ``rowsPerStatement(argumentsPerRow:reserved:)``.
    ///
    /// - SQLite: `SQLITE_MAX_VARIABLE_NUMBER`, 32 766 since SQLite 3.32.
    /// - PostgreSQL: the server takes 65 535, but libpq before its 2026 releases (15.18, the
    ///   one in Debian 12's main archive, among them) drops the session when a statement's
    ///   description (a ParameterDescription message of 4 bytes per argument and 6 more)
    ///   is longer than 30 000 bytes: 7 498 arguments at most.
    public var parameterLimit: Int {
        switch engine {
        case .sqlite: 32_766
        case .postgres: 7_498
        }
    }

    /// How many rows of `argumentsPerRow` arguments one statement takes, besides `reserved`
    /// arguments of its own: at least one, at most `limit` (1 000 by default, so a statement's
    /// text stays small), and never more than ``parameterLimit`` arguments in all.
    ///
    /// ```swift
    /// SQLDialect.postgres.rowsPerStatement(argumentsPerRow: 200)           // 37
    /// SQLDialect.postgres.rowsPerStatement(argumentsPerRow: 1, reserved: 1) // 1 000
    /// ```
    public func rowsPerStatement(argumentsPerRow: Int, reserved: Int = 0, limit: Int = 1_000) -> Int {
        max(1, min(limit, (parameterLimit - reserved) / max(argumentsPerRow, 1)))
    }

    /// `items` cut into runs that each fit one statement (see
    /// ``rowsPerStatement(argumentsPerRow:reserved:limit:)``): the keys of an `IN` list, the
    /// rows of a multi-row `INSERT`.
    ///
    /// ```swift
    /// for keys in dialect.statementChunks(ids, limit: 500) {
    ///     let list = keys.indices.map { dialect.placeholder($0 - keys.startIndex + 1) }.joined(separator: ", ")
    ///     …
    /// }
    /// ```
    public func statementChunks<Items: RandomAccessCollection>(_ items: Items, argumentsPerItem: Int = 1, reserved: Int = 0,
                                                               limit: Int = 1_000) -> [Items.SubSequence] {
        let size = rowsPerStatement(argumentsPerRow: argumentsPerItem, reserved: reserved, limit: limit)
        var chunks: [Items.SubSequence] = []
        var start = items.startIndex
        while start != items.endIndex {
            let end = items.index(start, offsetBy: size, limitedBy: items.endIndex) ?? items.endIndex
            chunks.append(items[start..<end])
            start = end
        }
        return chunks
    }

    /// How a `SELECT` in a write transaction holds the rows it reads until the commit.
    public enum RowLock: Sendable {
        /// The row may change but not go away: a row about to be pointed at by a new foreign
        /// key. Writers pointing at the same row do not wait for one another.
        case keepingItsKey
        /// The row is about to be deleted: writers that would point at it wait for the commit.
        case forDeleting
    }

    /// The clause that ends a `SELECT` taking `lock` on the rows it reads. PostgreSQL runs
    /// writers side by side (several service replicas on one database), so a row read in
    /// one transaction may be deleted by another before the commit; SQLite runs one writer
    /// at a time, so a row read in a write transaction stays as read, and the clause is empty.
    public func lockingClause(_ lock: RowLock) -> String {
        switch (engine, lock) {
        case (.sqlite, _): ""
        case (.postgres, .keepingItsKey): " FOR KEY SHARE"
        case (.postgres, .forDeleting): " FOR UPDATE"
        }
    }

    /// Whether a text column holds every Unicode scalar, NUL included. PostgreSQL's `text`
    /// cannot hold NUL (U+0000); a string with one is refused there rather than cut.
    public var textHoldsNUL: Bool { engine == .sqlite }

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
