import CSQLite
import Foundation
import Synchronization

/// A libsqlite3 connection. Not thread-safe: ``SQLiteDatabase`` gives each connection a
/// serial queue of its own and runs every call there.
package final class SQLiteConnection: DatabaseConnection, InterruptibleConnection {
    /// How to open the file.
    package enum Mode: Sendable {
        /// Read-only; fails if the file does not exist. Never changes the file.
        case readOnly
        /// Read-write; fails if the file does not exist.
        case readWrite
        /// Read-write, creating the file if needed.
        case readWriteCreate
    }

    let handle: OpaquePointer
    package let path: String
    package var dialect: any SQLDialect { SQLiteDialect() }
    private var statementCache: [String: SQLiteStatement] = [:]
    /// Whether ``close()`` ran; a closed connection refuses every call.
    private(set) var isClosed = false
    /// The private copy a read-only look reads, kept until this connection closes.
    private var view: SQLiteReadOnlyView?
    /// Set by ``interrupt()`` from another thread: statements started afterwards are
    /// refused, since `sqlite3_interrupt` stops only those running at the time.
    private let isInterrupted = Atomic<Bool>(false)

    /// A connection that only reads the store at `path` and leaves nothing beside it (see
    /// ``SQLiteReadOnlyView``).
    convenience init(readingStoreAt path: String, leavingFilesUntouched: Bool = SQLiteReadOnlyView.leavesFilesUntouched) throws(DatabaseError) {
        try self.init(reading: SQLiteReadOnlyView(storeAt: path, leavingFilesUntouched: leavingFilesUntouched))
    }

    /// A connection that only reads what `view` names, keeping the view until it closes.
    ///
    /// A store read in place is opened for writing (SQLite opens it read-only where the
    /// file cannot be written) with every write refused, so that closing it last writes the
    /// log back and removes it, as any writer's close does (see ``SQLiteReadOnlyView``).
    convenience init(reading view: SQLiteReadOnlyView) throws(DatabaseError) {
        try self.init(path: view.uri, mode: view.sharesTheLog ? .readWrite : .readOnly)
        if view.sharesTheLog { try execute(rawSQL: "PRAGMA query_only = 1") }
        self.view = view
    }

    /// Opens a connection; `path` may be `:memory:` or a `file:` URI.
    package init(path: String, mode: Mode) throws(DatabaseError) {
        var flags: Int32 = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db { sqlite3_close_v2(db) }
            throw DatabaseError(resultCode: rc, message: message)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        // Writers wait for each other instead of failing at once.
        sqlite3_busy_timeout(db, 10_000)
        SQLiteFunctions.register(on: db)
    }

    deinit {
        close()
    }

    /// Finalizes the statements and closes the connection now, so SQLite checkpoints and
    /// removes the WAL files before the caller goes on (a migration renames files next).
    func close() {
        guard !isClosed else { return }
        statementCache.removeAll()
        sqlite3_close_v2(handle)
        isClosed = true
        view = nil
    }

    private func checkOpen(_ sql: String?) throws(DatabaseError) {
        if isClosed { throw DatabaseError(resultCode: SQLITE_MISUSE, message: "the connection is closed", sql: sql) }
        if isInterrupted.load(ordering: .acquiring) { throw DatabaseError.interrupted(sql: sql) }
    }

    func interrupt() {
        isInterrupted.store(true, ordering: .releasing)
        sqlite3_interrupt(handle)
    }

    func clearInterruption() {
        isInterrupted.store(false, ordering: .releasing)
    }

    /// Ends the open transaction, even after an interruption: what was written is undone.
    func rollback() {
        // An interrupt that lands on the ROLLBACK itself is cleared once nothing runs: again.
        for _ in 0..<2 where !isClosed && isInTransaction {
            sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }

    func error(_ rc: Int32, sql: String?) -> DatabaseError {
        let system = sqlite3_system_errno(handle)
        return DatabaseError(resultCode: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql, systemErrorCode: system == 0 ? nil : system)
    }

    package func execute(rawSQL sql: String) throws(DatabaseError) {
        try checkOpen(sql)
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A prepared statement for `sql`, reused across calls on this connection.
    func statement(_ sql: String) throws(DatabaseError) -> SQLiteStatement {
        try checkOpen(sql)
        if let cached = statementCache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    @discardableResult
    package func run(rawSQL sql: String, _ arguments: [DatabaseValue]) throws(DatabaseError) -> Int {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    package func query(rawSQL sql: String, _ arguments: [DatabaseValue], _ body: (Row) throws -> Void) throws {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {
            try body(statement.row())
        }
    }

    package func insertRows(into table: String, columns: [String], rows: [[DatabaseValue]]) throws(DatabaseError) {
        guard !rows.isEmpty else { return }
        let sql =
            "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        let statement = try statement(sql)
        defer { statement.reset() }
        for row in rows {
            sqlite3_reset(statement.handle)
            try statement.bind(row)
            _ = try statement.step()
        }
    }

    /// The rowid of the last inserted row.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open.
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    package func transaction<T>(_ body: () throws -> T) throws -> T {
        // IMMEDIATE takes the write lock up front, so two writers never deadlock on upgrade.
        try execute(rawSQL: "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute(rawSQL: "COMMIT")
            return result
        } catch {
            rollback()
            throw error
        }
    }
}
