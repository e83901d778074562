/// A connection to a SQL database, used from one thread at a time.
///
/// Stores reach a connection only inside ``Database/read(_:)`` or ``Database/write(_:)``,
/// which run the closure on the connection's own thread, never on the cooperative pool.
public protocol DatabaseConnection: AnyObject {
    /// The SQL spelling of the engine behind this connection.
    var dialect: any SQLDialect { get }

    /// Runs one or more statements that take no arguments (DDL, pragmas), as text the
    /// caller vouches for: nothing in it is quoted or bound. Code outside the engines writes
    /// ``SQL`` values and calls ``execute(_:)``.
    func execute(rawSQL sql: String) throws(DatabaseError)

    /// Runs one statement, text the caller vouches for with `?`/`$n` placeholders for
    /// `arguments`; returns the number of rows changed. Code outside the engines calls
    /// ``run(_:)`` with an ``SQL`` value, which numbers its placeholders itself.
    @discardableResult
    func run(rawSQL sql: String, _ arguments: [DatabaseValue]) throws(DatabaseError) -> Int

    /// Runs a query given as text the caller vouches for, calling `body` for each row. Code
    /// outside the engines calls ``query(_:_:)`` with an ``SQL`` value.
    func query(rawSQL sql: String, _ arguments: [DatabaseValue], _ body: (Row) throws -> Void) throws

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T

    /// Inserts rows into one table the fastest way the engine has for bulk writes (one
    /// prepared statement stepped per row on SQLite, multi-row statements on PostgreSQL).
    /// Each row holds a value per column, in `columns`' order.
    ///
    /// ```swift
    /// try connection.insertRows(into: "ZPAGE", columns: ["Z_PK", "Z_ENT", "Z_OPT", "ZTEXT"],
    ///                           rows: [[.integer(1), .integer(1), .integer(1), .text("It was a bright cold day")]])
    /// ```
    func insertRows(into table: String, columns: [String], rows: [[DatabaseValue]]) throws(DatabaseError)
}

extension DatabaseConnection {
    /// All rows of a query given as raw text (see ``query(rawSQL:_:_:)``).
    public func rows(rawSQL sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        var rows: [Row] = []
        try query(rawSQL: sql, arguments) { rows.append($0) }
        return rows
    }

    /// The first column of the first row of a query given as raw text, or `nil` when there
    /// is no row (see ``query(rawSQL:_:_:)``).
    public func scalar(rawSQL sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        var result: DatabaseValue?
        try query(rawSQL: sql, arguments) { row in
            if result == nil { result = row[0] }
        }
        return result
    }
}
