import Dispatch
import Synchronization

/// How cancelling a task reaches the database: work a cancelled task queued is not run,
/// and a statement it is running is interrupted (`sqlite3_interrupt`, `PQcancel`), so a
/// cancelled migration or a shutdown does not wait out a long `INSERT … SELECT`.
///
/// Clean-up after a cancellation must still reach the database (dropping a migration's
/// shadow schema, giving up its lock): run it ``shielded(_:)``.
///
/// ```swift
/// do { try await migrate() }
/// catch {
///     await DatabaseCancellation.shielded { await workspace.cleanUp() }
///     throw error
/// }
/// ```
public enum DatabaseCancellation {
    /// Whether database work of the current task ignores the task's cancellation.
    @TaskLocal public static var isShielded = false

    /// Runs `body` so that its database work completes even though the task is cancelled.
    public static func shielded<T>(_ body: () async throws -> T) async rethrows -> T {
        try await $isShielded.withValue(true, operation: body)
    }

    /// Whether `error` says work was cancelled rather than failed: Swift's
    /// `CancellationError`, a cancelled migration, or a statement interrupted by a
    /// cancellation, anywhere in the error's chain.
    ///
    /// ```swift
    /// catch where DatabaseCancellation.isCancellation(error) { /* shutting down */ }
    /// ```
    public static func isCancellation(_ error: any Error) -> Bool {
        StorageFault.chain(of: error).contains { cause in
            switch cause {
            case is CancellationError: true
            case let error as MigrationError: error.code == .cancelled
            case let error as DatabaseError: error.isInterruption
            default: false
            }
        }
    }
}

/// A connection whose running statement can be stopped from another thread.
protocol InterruptibleConnection: AnyObject, SendableMetatype {
    /// Stops the statement running now and refuses the statements `body` starts after it,
    /// until ``clearInterruption()``. Called from any thread, while the connection is busy
    /// with the interrupted work (never while it closes).
    func interrupt()

    /// Lets statements run again; called on the connection's thread before each work.
    func clearInterruption()

    /// Ends the open transaction, undoing what it wrote, even after an interruption; does
    /// nothing without one. On the connection's thread.
    func rollback()
}

/// One piece of work on a connection's serial queue, as far as cancellation is concerned.
///
/// A value-type state machine: each event returns what to do, and the caller does it
/// under the lock that holds the state, so an interruption never reaches a connection
/// that has moved on to other work.
struct InterruptibleWorkState {
    enum State {
        case queued
        case running
        /// Cancelled before it ran: it will not.
        case cancelledBeforeStart
        /// Interrupted while it ran.
        case interrupted
        case finished
    }

    private(set) var state = State.queued

    enum StartAction { case run, refuse }

    /// The queue reached the work.
    mutating func start() -> StartAction {
        guard state == .queued else { return .refuse }
        state = .running
        return .run
    }

    enum CancelAction { case none, interrupt }

    /// The task that queued the work was cancelled.
    mutating func cancel() -> CancelAction {
        switch state {
        case .queued:
            state = .cancelledBeforeStart
            return .none
        case .running:
            state = .interrupted
            return .interrupt
        case .cancelledBeforeStart, .interrupted, .finished:
            return .none
        }
    }

    /// The work returned or threw.
    mutating func finish() {
        state = .finished
    }
}

extension DispatchQueue {
    /// Runs `body` with `connection` on this queue (the connection's own), waiting without
    /// blocking the cooperative pool; cancelling the calling task interrupts it.
    func runInterruptibly<C: InterruptibleConnection, T: Sendable>(
        _ connection: C,
        _ body: @escaping @Sendable (C) throws -> T
    ) async throws -> T {
        // The connection is touched only on this queue, or through `interrupt()`, which is
        // made for other threads.
        nonisolated(unsafe) let connection = connection
        guard !DatabaseCancellation.isShielded else {
            return try await withCheckedThrowingContinuation { continuation in
                self.async {
                    // Clean-up after an interruption runs on the connection it interrupted.
                    connection.clearInterruption()
                    continuation.resume(with: Result { try body(connection) })
                }
            }
        }
        let work = Mutex(InterruptibleWorkState())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                self.async {
                    // Before the work counts as running: an interruption of it is never cleared.
                    connection.clearInterruption()
                    guard work.withLock({ $0.start() }) == .run else {
                        continuation.resume(throwing: DatabaseError.interrupted(sql: nil))
                        return
                    }
                    let result = Result { try body(connection) }
                    // Under the lock: no interruption lands once the work is done.
                    work.withLock { $0.finish() }
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            work.withLock { state in
                if state.cancel() == .interrupt { connection.interrupt() }
            }
        }
    }
}

extension DatabaseError {
    /// The error of a statement a task's cancellation interrupted, or refused to start.
    static func interrupted(sql: String?) -> DatabaseError {
        DatabaseError(resultCode: 9, message: "interrupted: the task was cancelled", sql: sql)
    }

    /// Whether the statement was stopped by a cancellation (SQLite's `SQLITE_INTERRUPT`,
    /// PostgreSQL's `query_canceled`) rather than failing.
    public var isInterruption: Bool {
        sqlState.map { $0 == "57014" } ?? (resultCode & 0xff == 9)
    }
}
