/// An error reported by the database engine, with the statement that caused it.
///
/// `description` names the engine's message and the SQL, never the bound values, so it
/// can be logged without leaking data. A long statement (a multi-row `INSERT` of
/// thousands of arguments) is quoted by its start and its size:
///
/// ```swift
/// print(error)
/// // database error 0 (23505): duplicate key value violates unique constraint "zbook_pkey"
/// // — while executing `INSERT INTO zbook (z_pk, …) VALUES ($1, …), ($9, …` … 61 200 more characters, 8 000 parameters
/// ```
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
    /// How many arguments (parameters) the statement was given, when it took any.
    public var argumentCount: Int?
    /// The client library that raised the error itself, with its version (`libpq 15.18`):
    /// a message from the server it refused, a protocol state it lost. Not the server's
    /// doing, so waiting for the server does not help. `nil` for the engine's own errors.
    public var clientLibrary: String?

    /// An error with the engine's code and message and, where known, the statement and its context.
    public init(
        resultCode: Int32,
        message: String,
        sql: String? = nil,
        sqlState: String? = nil,
        systemErrorCode: Int32? = nil,
        argumentCount: Int? = nil,
        clientLibrary: String? = nil
    ) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
        self.sqlState = sqlState
        self.systemErrorCode = systemErrorCode
        self.argumentCount = argumentCount
        self.clientLibrary = clientLibrary
    }

    /// How much of a statement `description` quotes before cutting it.
    static let quotedStatementLength = 300

    /// `database error <code> (<SQLSTATE>): <message> — while executing <statement>`, without the bound values.
    public var description: String {
        var text = "database error \(resultCode)"
        if let sqlState { text += " (\(sqlState))" }
        if let clientLibrary { text += " raised by \(clientLibrary)" }
        text += ": \(message)"
        if let sql { text += " — while executing \(Self.quote(sql, argumentCount: argumentCount))" }
        return text
    }

    /// The statement in backquotes, cut after ``quotedStatementLength`` characters with
    /// what was left out and how many arguments it took.
    static func quote(_ sql: String, argumentCount: Int?) -> String {
        guard sql.count > quotedStatementLength + 40 else { return "`\(sql)`" }
        let kept = sql.prefix(quotedStatementLength)
        let arguments = argumentCount.map { ", \($0) parameter\($0 == 1 ? "" : "s")" } ?? ""
        return "`\(kept)` … \(sql.count - kept.count) more characters\(arguments)"
    }
}
