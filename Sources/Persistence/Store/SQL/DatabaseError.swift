/// An error reported by the database engine, with the statement that caused it.
///
/// `description` names the engine's message and the SQL, never the bound values, so it
/// can be logged without leaking data.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The engine's result code (SQLite's extended result code, or 0 for PostgreSQL).
    public var resultCode: Int32
    /// The engine's message, e.g. `no such table: ZBOOK`.
    public var message: String
    /// The statement that failed, if any.
    public var sql: String?
    /// PostgreSQL's SQLSTATE, when the engine is PostgreSQL.
    public var sqlState: String?
    /// The operating system's `errno` behind a SQLite I/O error (`sqlite3_system_errno`),
    /// e.g. `ENOSPC` when a write found the disk full.
    public var systemErrorCode: Int32?

    public init(resultCode: Int32, message: String, sql: String? = nil, sqlState: String? = nil, systemErrorCode: Int32? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
        self.sqlState = sqlState
        self.systemErrorCode = systemErrorCode
    }

    public var description: String {
        var text = "database error \(resultCode)"
        if let sqlState { text += " (\(sqlState))" }
        text += ": \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}
