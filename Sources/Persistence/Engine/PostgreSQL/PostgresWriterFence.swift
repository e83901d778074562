import Logging

/// Holds other writers off a PostgreSQL store while a step reads it, and swaps the step's
/// result in under the same hold.
///
/// A session of the migration's own locks every table of the store's schema `IN EXCLUSIVE
/// MODE` in a transaction: reads go on (the migration's own and everyone else's), while an
/// `INSERT`, `UPDATE`, `DELETE` or `SELECT … FOR UPDATE` of another session waits. Taking the
/// lock waits for the writes in flight to commit, so what the step reads includes them.
/// The step's in-place `ALTER`s, or the schema swap, run in that transaction; its commit
/// lets the waiting writers go on, on the tables it leaves: a waiting statement looks its
/// table up again by name, so it lands in the new version's table, or fails if it no longer
/// fits it. Nothing acknowledged is dropped with the old tables.
///
/// ```swift
/// let fence = try await PostgresWriterFence.open(configuration, store: url, logger: logger)
/// try await fence.hold()                        // writers wait from here
/// try await fence.commit { try $0.execute("ALTER SCHEMA …") }
/// await fence.release()
/// ```
final class PostgresWriterFence: WriterFence {
    private let database: PostgresDatabase
    private let schema: String
    let store: StoreURL
    let logger: Logger
    /// Whether the tables are locked now.
    var isHeld = false
    var holder: any Database { database }

    private init(database: PostgresDatabase, schema: String, store: StoreURL, logger: Logger) {
        self.database = database
        self.schema = schema
        self.store = store
        self.logger = logger
    }

    static func open(_ configuration: PostgresConfiguration, store: StoreURL, logger: Logger) async throws -> PostgresWriterFence {
        // The transaction stays open while a step runs, however long it takes.
        let database = try await PostgresMigrationSession.open(configuration, store: store, longTransactions: true)
        return PostgresWriterFence(database: database, schema: configuration.schema, store: store, logger: logger)
    }

    /// Locks every table of the store's schema against writers, waiting at most 2 s: a
    /// deadlock with a writer that locks tables in another order ends in a retry rather than
    /// a long stall.
    func beginHolding() async throws {
        let schema = self.schema
        try await database.writeWithoutTransaction { connection in
            try connection.execute("BEGIN")
            do {
                try connection.execute("SET LOCAL lock_timeout = '2s'")
                // The key counter first: a save holding it that then writes a join table
                // (`z_1…`, named before it) would otherwise wait for this transaction as it
                // waits for the save.
                let tables = PostgresSchemaContents.inLockOrder(try PostgresSchemaContents.tableNames(in: schema, on: connection)).map {
                    PostgresConfiguration.qualifiedName($0, inSchema: schema)
                }
                if !tables.isEmpty { try connection.execute(rawSQL: "LOCK TABLE \(tables.joined(separator: ", ")) IN EXCLUSIVE MODE") }
                try connection.execute("SET LOCAL lock_timeout = 0")
            } catch {
                (connection as? any InterruptibleConnection)?.rollback()
                throw error
            }
        }
    }

    func isWritersInTheWay(_ error: DatabaseError) -> Bool {
        ["55P03", "40P01"].contains(error.sqlState)  // lock_not_available, deadlock_detected
    }

    func writersStayed(_ error: DatabaseError) async -> MigrationError {
        MigrationError(
            .storeBusy,
            "other sessions kept writing the store's tables for \(WriterFencePatience.duration) (\(await writingSessions())), and a migration must hold writers off while it reads",
            hint: "let them finish or stop them (such as a service of the previous release), then migrate again; the store was not changed",
            store: store.description,
            underlying: error
        )
    }

    func didCommit() async {}

    /// Lets writers go on without changing anything, and ends the session.
    func release() async {
        await letGo()
        await database.close()
    }

    /// The sessions writing the schema's tables, for a message: server process ids and applications.
    private func writingSessions() async -> String {
        let schema = self.schema
        let sessions = try? await database.writeWithoutTransaction { connection in
            try connection.rows(
                rawSQL: """
                    SELECT DISTINCT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                    JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace \
                    WHERE n.nspname = $1 AND l.granted AND l.mode IN ('RowExclusiveLock', 'RowShareLock') AND a.pid <> pg_backend_pid() ORDER BY a.pid
                    """,
                [.text(schema)]
            ).map { row in
                let application = row[1].text.flatMap { $0.isEmpty ? nil : " (\($0))" } ?? ""
                return "server process \(row[0].int64 ?? 0)\(application)"
            }
        }
        guard let sessions, !sessions.isEmpty else { return "sessions unknown" }
        return sessions.joined(separator: ", ")
    }
}
