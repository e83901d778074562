import Logging

/// Holds other writers off a SQLite store while it is migrated, and writes the migrated
/// store into the store's own file.
///
/// A connection of the migration's own keeps the store's write lock (`BEGIN IMMEDIATE`)
/// from before the first step reads the store until the migrated store is in: another
/// process's write waits (as long as its busy timeout says) or is refused with `database
/// is locked`; it never lands in a store about to be replaced. The migrated store is
/// copied into the store's file with SQLite's backup API, in one transaction through the
/// store's own WAL, so the file stays the one every process has open: a process that had
/// the store open before sees the new version (its next write goes there, or fails if its
/// statement no longer fits the new tables), never a file that is gone. A crash before the
/// commit leaves the old store.
///
/// ```swift
/// let fence = try await SQLiteWriterFence.open(storeAt: path, store: url, logger: logger)
/// try await fence.hold()                           // writers wait from here
/// try await fence.copyStore(to: workFile)          // what the steps read
/// …
/// try await fence.replaceStore(with: migratedFile) // writers go on, into the new version
/// await fence.release()
/// ```
final class SQLiteWriterFence: WriterFence {
    /// The connection that holds the write lock and writes the migrated store in.
    private let writer: SQLiteDatabase
    /// A reader of the store: the copies the steps read, and whether anyone else committed.
    private let reader: SQLiteDatabase
    /// The store's file.
    private let path: String
    let store: StoreURL
    let logger: Logger
    /// Whether the write lock is held now.
    var isHeld = false
    var holder: any Database { writer }

    private init(writer: SQLiteDatabase, reader: SQLiteDatabase, path: String, store: StoreURL, logger: Logger) {
        self.writer = writer
        self.reader = reader
        self.path = path
        self.store = store
        self.logger = logger
    }

    static func open(storeAt path: String, store: StoreURL, logger: Logger) async throws -> SQLiteWriterFence {
        // In WAL mode (a store in rollback-journal mode goes to it, as every store the framework
        // opens does): readers then go on while the migrated store is written in.
        let writer = try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: 0)
        do {
            let reader = try await SQLiteDatabase.open(path: path, mode: .readOnly, readerCount: 0)
            return SQLiteWriterFence(writer: writer, reader: reader, path: path, store: store, logger: logger)
        } catch {
            await writer.close()
            throw error
        }
    }

    /// Takes the store's write lock, waiting for another writer as long as the connection's
    /// busy timeout says.
    func beginHolding() async throws {
        try await writer.writeWithoutTransaction { try $0.execute("BEGIN IMMEDIATE") }
    }

    func isWritersInTheWay(_ error: DatabaseError) -> Bool {
        [5, 6].contains(error.resultCode & 0xff)  // SQLITE_BUSY, SQLITE_LOCKED
    }

    func writersStayed(_ error: DatabaseError) async -> MigrationError {
        MigrationError(
            .storeBusy,
            "other processes kept writing the store for \(WriterFencePatience.duration), and a migration must hold writers off while it runs",
            hint:
                "stop the processes that write the store (such as a service of the previous release) or let them finish, then migrate again; the store was not changed",
            store: store.description,
            underlying: error
        )
    }

    func didCommit() async {
        await writeBack()
    }

    /// A copy of the store as it is now, with every committed row (those still in its WAL
    /// too), written to a new file at `path`.
    ///
    /// With the write lock held and the WAL written back, the store's file alone is the
    /// store, and its bytes are copied as they are; a reader of an older snapshot in the way
    /// of the write-back, or a file that cannot be read so, leaves it to SQLite's backup API,
    /// page by page. A copy that cannot be written fails as the backup's would.
    func copyStore(to path: String) async throws {
        try await hold()
        let (storePath, logger, store) = (self.path, self.logger, self.store)
        try await reader.writeWithoutTransaction { connection in
            guard let source = connection as? SQLiteConnection else { return }
            let writtenBack = (try? Self.writeBackWhole(storeAt: storePath)) == true
            if writtenBack, try SQLiteFileCopy.copy(databaseOf: source, to: path) {
                logger.debug("copied the store's bytes", metadata: [LoggingKeys.store: "\(store)"])
                return
            }
            logger.debug(
                "copying the store page by page",
                metadata: [
                    LoggingKeys.store: "\(store)",
                    LoggingKeys.reason: "\(writtenBack ? "its file could not be read whole" : "its WAL could not be written back whole")",
                ]
            )
            let destination = try SQLiteConnection(path: path, mode: .readWriteCreate)
            defer { destination.close() }
            try SQLiteBackup.copy(from: source, to: destination)
        }
    }

    /// Writes the migrated store at `file` into the store's own file, in one transaction,
    /// calling `swapping` just before. Writers go on afterwards, on the new version.
    ///
    /// A backup cannot start while its destination has a transaction open, so the write
    /// lock is let go and taken again by the copy at once; a process that committed in that
    /// instant is noticed (`PRAGMA data_version`), and the migration then fails with the
    /// store unchanged rather than overwriting that write.
    func replaceStore(
        with file: String,
        lockLetGo: @escaping @Sendable () throws -> Void = {},
        swapping: @escaping @Sendable () throws -> Void
    ) async throws {
        try await hold()
        let before = try await dataVersion()
        let backup = try await writer.writeWithoutTransaction { connection -> SQLiteBackup? in
            guard let connection = connection as? SQLiteConnection else { return nil }
            // Opened while the lock is still held: between the rollback and the copy's first
            // step, which takes the lock again, nothing is left to wait for.
            let source = try SQLiteConnection(path: file, mode: .readOnly)
            connection.rollback()
            do {
                try lockLetGo()
            } catch {
                source.close()
                throw error
            }
            return try SQLiteBackup(from: source, into: connection)
        }
        isHeld = false
        guard let backup else { return }
        do {
            guard try await dataVersion() == before else { throw StoreWrittenDuringReplacement(store: store) }
            try await writer.writeWithoutTransaction { _ in
                try swapping()
                try backup.complete()
            }
        } catch {
            _ = try? await writer.writeWithoutTransaction { _ in backup.abandon() }
            throw error
        }
        await writeBack()
    }

    /// Lets writers go on, without writing anything, and closes the connections.
    func release() async {
        await letGo()
        await reader.close()
        await writer.close()
    }

    /// Writes the store's WAL back into its file without waiting for anyone; whether every
    /// commit is in the file now (always so for a store in rollback-journal mode). A
    /// connection of its own: the holder's, in its transaction, cannot write back, and the
    /// reader is read-only. SQLite's own: its close keeps the process's locks on the file.
    private static func writeBackWhole(storeAt path: String) throws -> Bool {
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        defer { connection.close() }
        // (busy, frames in the WAL, frames written back); -1 and -1 when not in WAL mode.
        guard let row = try connection.rows("PRAGMA wal_checkpoint(PASSIVE)").first else { return false }
        return row[0].int64 == 0 && row[1].int64 == row[2].int64
    }

    /// The store's data version as the reader sees it: it changes when another connection commits.
    private func dataVersion() async throws -> Int64? {
        try await reader.writeWithoutTransaction { try $0.scalar("PRAGMA data_version")?.int64 }
    }

    /// Writes the WAL back into the file, keeping it small; a reader in the way only delays it.
    private func writeBack() async {
        do {
            try await writer.checkpoint()
        } catch {
            logger.debug("the store's WAL was not written back yet; SQLite does it later", metadata: [LoggingKeys.store: "\(store)"])
        }
    }
}
