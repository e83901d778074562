/// A PostgreSQL database holding a store: one writer connection and a pool of readers,
/// each connection on a serial queue of its own so libpq's blocking calls never occupy
/// the cooperative thread pool.
///
/// Reads run in `REPEATABLE READ READ ONLY` transactions, so every statement of one read
/// sees the same snapshot. Writes run one at a time on the writer, in `READ COMMITTED`
/// transactions: as with SQLite's single writer, two saves of this process never
/// interleave, and the row locks of `UPDATE` keep several processes on one database apart.
///
/// ```swift
/// let db = try await PostgresDatabase.open(try PostgresConfiguration(url: "postgres://shop@localhost/shop"))
/// let count = try await db.read { try $0.scalar("SELECT count(*) FROM zbook") }
/// await db.close()
/// ```
package final class PostgresDatabase: Database {
    package let configuration: PostgresConfiguration
    package var dialect: any SQLDialect { PostgresDialect() }
    private let writer: PostgresLane
    /// `nil` when reads share the writer (no readers asked for).
    private let readers: PostgresLanePool?

    private init(configuration: PostgresConfiguration, writer: PostgresLane, readers: PostgresLanePool?) {
        self.configuration = configuration
        self.writer = writer
        self.readers = readers
    }

    /// Connects the writer now (so a wrong address or password fails here) and up to
    /// `readerCount` readers as reads need them.
    ///
    /// - Parameter configuration: the server, database, schema and session settings.
    /// - Parameter readerCount: how many read sessions at most run beside the writer.
    /// - Parameter readOnly: every session refuses writes (`default_transaction_read_only`).
    /// - Parameter isDurable: `false` commits without waiting for the server's WAL to reach
    ///   disk (`synchronous_commit = off`): for a migration's shadow schema, thrown away if
    ///   anything fails.
    /// - Throws: ``DatabaseError`` naming the server, database and user, and the reason.
    package static func open(
        _ configuration: PostgresConfiguration,
        readerCount: Int = 2,
        readOnly: Bool = false,
        isDurable: Bool = true
    ) async throws -> PostgresDatabase {
        let writer = try await PostgresLane.open(configuration, readOnly: readOnly, isDurable: isDurable, label: "persistence.postgres.writer")
        let readers =
            readerCount > 0
            ? PostgresLanePool(capacity: readerCount) { index in
                // Readers never write, whatever the store's options.
                try await PostgresLane.open(configuration, readOnly: true, label: "persistence.postgres.reader\(index)")
            }
            : nil
        return PostgresDatabase(configuration: configuration, writer: writer, readers: readers)
    }

    static let readTransaction = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    package func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        let work: @Sendable (PostgresConnection) throws -> T = { connection in
            try connection.transaction(Self.readTransaction) { try body(connection) }
        }
        guard let readers else { return try await writer.run(work) }
        return try await readers.withLane { try await $0.run(work) }
    }

    /// Runs `body` in a read transaction on the writer connection: for the few reads of
    /// opening a store, which need no reader connection of their own.
    func readOnWriter<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await writer.run { connection in
            try connection.transaction(Self.readTransaction) { try body(connection) }
        }
    }

    package func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await writer.run { connection in
            try connection.transaction { try body(connection) }
        }
    }

    /// Whether the writer's statements all run in one server session: directly connected, or
    /// through a pooler in session mode (``PostgresConnection/keepsSession``).
    package var keepsSession: Bool {
        get async throws { try await writer.run { $0.keepsSession } }
    }

    package func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await writer.run(body)
    }

    package var connectionUsage: ConnectionUsage {
        ConnectionUsage(readers: readers?.counts ?? ConnectionUsage.Counts(), writer: writer.load.counts)
    }

    /// Ends every session, readers first; later calls fail.
    package func close() async {
        await readers?.close()
        await writer.close()
    }
}
