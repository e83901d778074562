import Dispatch
import Foundation
import Synchronization

/// A SQLite database file shared by a writer connection and a pool of readers.
///
/// Every call runs on the connection's own serial dispatch queue, so blocking SQLite
/// calls never occupy the cooperative thread pool. In WAL mode readers see the last
/// committed state while the writer writes.
///
/// ```swift
/// let db = try await SQLiteDatabase.open(path: "bookstore.sqlite", mode: .readWriteCreate)
/// let count = try await db.read { try $0.scalar("SELECT count(*) FROM ZBOOK") }
/// ```
package final class SQLiteDatabase: Database {
    /// A connection and the queue it lives on.
    final class Lane: @unchecked Sendable {
        // The connection is touched only on `queue`, which is what makes this Sendable.
        let connection: SQLiteConnection
        let queue: DispatchQueue
        /// A lane that must close after this one: readers keep the writer open, because
        /// SQLite removes the `-wal` and `-shm` files only when the last connection to
        /// close can write. Closed after a read-only reader, they would stay beside the store.
        private let closesAfter: Lane?
        let load = LaneLoad()

        init(connection: SQLiteConnection, label: String, closesAfter: Lane? = nil) {
            self.connection = connection
            self.queue = DispatchQueue(label: label)
            self.closesAfter = closesAfter
        }

        /// Runs `body` on the lane's queue; cancelling the calling task interrupts it.
        func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
            try await load.counting { try await queue.runInterruptibly(connection, body) }
        }
    }

    package let path: String
    package var dialect: any SQLDialect { SQLiteDialect() }
    private let writer: Lane
    private let readers: [Lane]
    private let nextReader = Atomic<Int>(0)

    private init(path: String, writer: Lane, readers: [Lane]) {
        self.path = path
        self.writer = writer
        self.readers = readers
    }

    /// Opens the file with one writer and `readerCount` readers.
    ///
    /// `:memory:` databases get a single connection for everything: each in-memory
    /// connection would otherwise see a database of its own.
    ///
    /// A file opened with `isDurable: false` is written without syncs and without a
    /// rollback journal: fast, and safe only for a file thrown away if anything fails (a
    /// failed transaction is not undone, a crash may leave it damaged). Opened durably
    /// again, it returns to WAL mode. `commitsAtomically` keeps a rollback journal without
    /// syncs: a killed process leaves whole transactions (a crash of the machine may not).
    package static func open(
        path: String,
        mode: SQLiteConnection.Mode,
        readerCount: Int = 2,
        isDurable: Bool = true,
        commitsAtomically: Bool = false
    ) async throws -> SQLiteDatabase {
        let setupQueue = DispatchQueue(label: "persistence.sqlite.open")
        return try await withCheckedThrowingContinuation { continuation in
            setupQueue.async {
                continuation.resume(
                    with: Result {
                        let writerConnection = try SQLiteConnection(path: path, mode: mode)
                        let writer = Lane(connection: writerConnection, label: "persistence.sqlite.writer")
                        guard path != ":memory:" else {
                            return SQLiteDatabase(path: path, writer: writer, readers: [])
                        }
                        if mode != .readOnly {
                            try writerConnection.execute(
                                isDurable
                                    ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL"
                                    : commitsAtomically
                                        ? "PRAGMA journal_mode=TRUNCATE; PRAGMA synchronous=OFF" : "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF"
                            )
                        }
                        let readers = try (0..<readerCount).map { index in
                            let connection = try SQLiteConnection(path: path, mode: .readOnly)
                            return Lane(connection: connection, label: "persistence.sqlite.reader\(index)", closesAfter: writer)
                        }
                        return SQLiteDatabase(path: path, writer: writer, readers: readers)
                    }
                )
            }
        }
    }

    /// The store at `path`, opened on one connection that only reads and leaves nothing
    /// beside it (see ``SQLiteReadOnlyView``).
    static func open(readingStoreAt path: String) async throws -> SQLiteDatabase {
        // Read here: the connection is made on a queue of its own, outside this task.
        let untouched = SQLiteReadOnlyView.leavesFilesUntouched
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "persistence.sqlite.open").async {
                continuation.resume(
                    with: Result {
                        let connection = try SQLiteConnection(readingStoreAt: path, leavingFilesUntouched: untouched)
                        return SQLiteDatabase(
                            path: connection.path,
                            writer: Lane(connection: connection, label: "persistence.sqlite.writer"),
                            readers: []
                        )
                    }
                )
            }
        }
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        guard !readers.isEmpty else { return try await writer.run(body) }
        let index = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
        let lane = readers[abs(index) % readers.count]
        return try await lane.run { connection in
            // A read transaction, so every statement of `body` sees one snapshot.
            try connection.execute("BEGIN DEFERRED")
            // A read changes nothing: ending it by rolling back also works after an interruption.
            defer { connection.rollback() }
            return try body(connection)
        }
    }

    package func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await writer.run { connection in
            try connection.transaction { try body(connection) }
        }
    }

    package func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await writer.run(body)
    }

    package var connectionUsage: ConnectionUsage {
        ConnectionUsage(readers: readers.map(\.load.counts).reduce(ConnectionUsage.Counts(), +), writer: writer.load.counts)
    }

    /// Closes every connection, readers first; later calls fail. SQLite writes the WAL back
    /// and removes the `-wal` and `-shm` files when the last connection to a file closes.
    package func close() async {
        await DatabaseCancellation.shielded {
            for lane in readers + [writer] {
                _ = try? await lane.run { $0.close() }
            }
        }
    }

    /// Writes the WAL back into the database file (before copying or replacing it).
    ///
    /// - Throws: ``DatabaseError`` when another connection's transaction kept part of the
    ///   WAL from being written back (`SQLITE_BUSY`): the file alone is then not the store.
    package func checkpoint() async throws {
        try await writer.run { connection in
            let row = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)").first
            // (busy, frames in the WAL, frames written back); -1 frames when not in WAL mode.
            if let row, row[0].int64 == 1 || (row[1].int64 ?? 0) != (row[2].int64 ?? 0) {
                throw DatabaseError(
                    resultCode: 5,
                    message: "another connection is using the database, so its WAL could not be written back",
                    sql: "PRAGMA wal_checkpoint(TRUNCATE)"
                )
            }
        }
    }
}
