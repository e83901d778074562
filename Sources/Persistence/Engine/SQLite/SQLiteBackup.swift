import CSQLite

/// One copy of a whole SQLite database into another through SQLite's backup API
/// (`sqlite3_backup_*`), page by page, in one transaction of the destination: a crash
/// before it completes leaves the destination as it was.
///
/// ```swift
/// let backup = try SQLiteBackup(from: SQLiteConnection(path: migratedFile, mode: .readOnly), into: storeConnection)  // the store's write lock is held from here
/// try backup.complete()                                                      // every page, committed
/// ```
///
/// Used on the destination connection's queue only.
final class SQLiteBackup: @unchecked Sendable {
    private let source: SQLiteConnection
    private let destination: SQLiteConnection
    private var backup: OpaquePointer?

    /// Starts copying the database open on `source` (read-only; the copy closes it) into `destination`, taking the
    /// destination's write lock (waiting for other writers as its busy timeout says) and
    /// copying nothing yet. `destination` must have no transaction open.
    init(from source: SQLiteConnection, into destination: SQLiteConnection) throws(DatabaseError) {
        self.source = source
        self.destination = destination
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            let error = destination.error(sqlite3_errcode(destination.handle), sql: nil)
            source.close()
            throw error
        }
        self.backup = backup
        let rc = sqlite3_backup_step(backup, 0)
        guard rc == SQLITE_OK || rc == SQLITE_DONE else {
            abandon()
            throw Self.error(rc, destination: destination)
        }
    }

    /// Copies `source` into `destination`, a connection without a transaction, in one go.
    static func copy(from source: SQLiteConnection, to destination: SQLiteConnection) throws(DatabaseError) {
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw destination.error(sqlite3_errcode(destination.handle), sql: nil)
        }
        let rc = sqlite3_backup_step(backup, -1)
        sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else { throw error(rc, destination: destination) }
    }

    /// Copies every page and commits.
    func complete() throws(DatabaseError) {
        guard let backup else { throw DatabaseError(resultCode: SQLITE_MISUSE, message: "the copy was abandoned") }
        let rc = sqlite3_backup_step(backup, -1)
        guard rc == SQLITE_DONE else {
            abandon()
            throw Self.error(rc, destination: destination)
        }
        let finished = sqlite3_backup_finish(backup)
        self.backup = nil
        source.close()
        guard finished == SQLITE_OK else { throw destination.error(finished, sql: nil) }
    }

    /// Stops without completing: the destination's transaction is rolled back, its lock let go.
    func abandon() {
        if let backup { sqlite3_backup_finish(backup) }
        backup = nil
        source.close()
    }

    deinit { abandon() }

    private static func error(_ rc: Int32, destination: SQLiteConnection) -> DatabaseError {
        // A WAL database takes a copy only of its own page size.
        if rc & 0xff == SQLITE_READONLY {
            return DatabaseError(
                resultCode: rc,
                message:
                    "the migrated store could not be written into the store's file (its page size differs from the store's, or the file cannot be written)"
            )
        }
        let system = sqlite3_system_errno(destination.handle)
        return DatabaseError(resultCode: rc, message: String(cString: sqlite3_errstr(rc)), systemErrorCode: system == 0 ? nil : system)
    }
}
