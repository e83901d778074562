/// A database a store lives in: run work on a reader or on the single writer.
///
/// The closures run on a thread that belongs to the connection, so they may block.
public protocol Database: Sendable {
    var dialect: any SQLDialect { get }

    /// Runs `body` on a reader connection, in one read transaction (one snapshot).
    func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T

    /// Runs `body` on the writer connection inside a transaction: all or nothing.
    func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T

    /// Runs `body` on the writer connection; `body` manages transactions itself.
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T

    /// How many connections are open, running work and waited for, at this moment.
    var connectionUsage: ConnectionUsage { get }

    /// Closes the connections now rather than when the last reference goes; later calls fail.
    func close() async
}
