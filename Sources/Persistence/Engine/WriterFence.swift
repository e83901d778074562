import Logging

/// Holds other writers off a store while a migration reads it, and runs what changes the
/// store (in-place steps, a swap) in the transaction that holds them: one per engine
/// (``SQLiteWriterFence``, ``PostgresWriterFence``), the waiting and committing written
/// here once.
///
/// ```swift
/// try await fence.hold()                          // writers wait from here
/// try await fence.commit { try $0.execute("…") }  // in the holding transaction; writers go on
/// ```
protocol WriterFence: AnyObject {
    /// The fence's own connection, where the holding transaction runs.
    var holder: any Database { get }
    /// Whether the holding transaction is open now.
    var isHeld: Bool { get set }
    var store: StoreURL { get }
    var logger: Logger { get }

    /// One attempt to open the holding transaction; throws what the engine says when other
    /// writers are in the way (see ``isWritersInTheWay(_:)``).
    func beginHolding() async throws

    /// Whether `error`, from ``beginHolding()``, means other writers were in the way: then
    /// ``hold()`` tries again, until ``WriterFencePatience/duration``.
    func isWritersInTheWay(_ error: DatabaseError) -> Bool

    /// The error when other writers stayed in the way for the whole patience.
    func writersStayed(_ error: DatabaseError) async -> MigrationError

    /// What follows a commit of the holding transaction (SQLite writes its WAL back).
    func didCommit() async
}

/// How long writers in flight may keep a migration from holding them off.
enum WriterFencePatience {
    static let duration: Duration = .seconds(60)
}

extension WriterFence {
    /// Opens the holding transaction, once the writes in flight are committed; holding
    /// already does nothing.
    ///
    /// - Throws: ``MigrationError/Code/storeBusy`` when other writers kept the store for
    ///   ``WriterFencePatience/duration``.
    func hold() async throws {
        guard !isHeld else { return }
        let deadline = ContinuousClock.now + WriterFencePatience.duration
        var announced = false
        while true {
            do {
                try await beginHolding()
                isHeld = true
                return
            } catch let error as DatabaseError where isWritersInTheWay(error) {
                guard ContinuousClock.now < deadline else { throw await writersStayed(error) }
                if !announced {
                    logger.notice("waiting for other writers of the store to finish", metadata: [LoggingKeys.store: "\(store)"])
                    announced = true
                }
            }
        }
    }

    /// Runs `body` in the holding transaction and commits: in-place steps, or a swap.
    /// Writers go on afterwards, on what it leaves.
    func commit(_ body: @escaping @Sendable (any DatabaseConnection) throws -> Void) async throws {
        try await hold()
        isHeld = false
        try await holder.writeWithoutTransaction { connection in
            do {
                try body(connection)
                try connection.execute("COMMIT")
            } catch {
                (connection as? any InterruptibleConnection)?.rollback()
                throw error
            }
        }
        await didCommit()
    }

    /// Lets writers go on without changing anything (the connection is closed after).
    func letGo() async {
        if isHeld { _ = try? await holder.writeWithoutTransaction { ($0 as? any InterruptibleConnection)?.rollback() } }
        isHeld = false
    }
}
