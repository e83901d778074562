import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// Cancelling a task reaches the database: a running statement is interrupted
/// (`sqlite3_interrupt`, `PQcancel`) and its transaction rolled back, work the cancelled
/// task queued is not run, and the connection serves the next caller.
@Suite("cancelling a task reaches the database")
struct DatabaseCancellationTests {
    /// A statement that runs for a minute or more unless it is stopped: long enough that
    /// waiting it out fails the test even on a busy machine, short enough that a test
    /// without interruption ends.
    static func longStatement(_ dialect: any SQLDialect) -> String {
        dialect is PostgresDialect
            ? "SELECT pg_sleep(60)"
            : "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 80000000) SELECT count(*) FROM c"
    }

    @Test(arguments: TestBackend.allCases)
    func aRunningWriteIsInterruptedAndRolledBack(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            try await database.writeWithoutTransaction { try $0.execute("CREATE TABLE scratch (x INTEGER)") }
            let long = Self.longStatement(database.dialect)
            let outcome = await Self.cancelledWhileRunning { running in
                try await database.write { connection in
                    try connection.run(rawSQL: "INSERT INTO scratch (x) VALUES (1)", [])
                    running.set()
                    _ = try connection.scalar(rawSQL: long)
                }
            }
            #expect(outcome.interruptedStatement == long, "the long statement was not interrupted: \(outcome)")
            // Rolled back, and the writer serves the next write.
            #expect(try await database.read { try $0.scalar("SELECT count(*) FROM scratch") }?.int64 == 0)
            _ = try await database.write { try $0.run(rawSQL: "INSERT INTO scratch (x) VALUES (2)", []) }
            #expect(try await database.read { try $0.scalar("SELECT sum(x) FROM scratch") }?.int64 == 2)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aRunningReadIsInterruptedAndItsConnectionServesTheNextRead(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            let long = Self.longStatement(database.dialect)
            // As many reads as there are readers, so every reader is interrupted once.
            for _ in 0..<3 {
                let outcome = await Self.cancelledWhileRunning { running in
                    try await database.read { connection in
                        running.set()
                        _ = try connection.scalar(rawSQL: long)
                    }
                }
                #expect(outcome.interruptedStatement == long, "the read was not interrupted: \(outcome)")
            }
            for _ in 0..<3 {
                #expect(try await database.read { try $0.scalar("SELECT 40 + 2") }?.int64 == 42)
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func workOfACancelledTaskIsNotRunUnlessShielded(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            try await database.writeWithoutTransaction { try $0.execute("CREATE TABLE scratch (x INTEGER)") }
            let (refused, shielded) = await Self.writesOfACancelledTask(on: database)
            #expect(refused.isInterruption, "a cancelled task's write ran: \(refused)")
            #expect(shielded.succeeded, "a shielded write of a cancelled task failed: \(shielded)")
            #expect(try await database.read { try $0.scalar("SELECT sum(x) FROM scratch") }?.int64 == 10)
        }
    }

    /// How a piece of database work ended.
    enum Outcome: Sendable, CustomStringConvertible {
        case success
        case failure(any Error)

        init(_ work: () async throws -> Void) async {
            do {
                try await work()
                self = .success
            } catch {
                self = .failure(error)
            }
        }

        var succeeded: Bool { if case .success = self { true } else { false } }

        var isInterruption: Bool {
            if case .failure(let error as DatabaseError) = self { return error.isInterruption }
            return false
        }

        /// The statement an interruption stopped while it ran.
        var interruptedStatement: String? {
            if case .failure(let error as DatabaseError) = self, error.isInterruption { return error.sql }
            return nil
        }

        var description: String {
            switch self {
            case .success: "succeeded"
            case .failure(let error): "\(error)"
            }
        }
    }

    /// Two writes of a task cancelled before them: one as it is, one shielded.
    static func writesOfACancelledTask(on database: any Database) async -> (refused: Outcome, shielded: Outcome) {
        await withTaskGroup(of: (Outcome, Outcome).self) { group in
            group.addTask { await writesAfterCancelling(on: database) }
            return await group.next()!
        }
    }

    private static func writesAfterCancelling(on database: any Database) async -> (Outcome, Outcome) {
        withUnsafeCurrentTask { task in task?.cancel() }
        let refused = await Outcome { () async throws -> Void in
            try await database.write { connection in _ = try connection.run(rawSQL: "INSERT INTO scratch (x) VALUES (1)", []) }
        }
        let shielded = await DatabaseCancellation.shielded {
            await Outcome { () async throws -> Void in
                try await database.write { connection in _ = try connection.run(rawSQL: "INSERT INTO scratch (x) VALUES (10)", []) }
            }
        }
        return (refused, shielded)
    }

    /// Runs `work` in a task and cancels it once its `running` flag says its long statement
    /// is about to start, and a moment more; again, with a new task, when the cancellation
    /// came before the statement began after all (the work then ends interrupted with no
    /// statement: a loaded machine kept its thread from the statement for longer than the
    /// moment), at most ten times. What it returns is the last outcome.
    static func cancelledWhileRunning(_ work: @escaping @Sendable (RunningFlag) async throws -> Void) async -> Outcome {
        var outcome = await cancelled(work)
        for _ in 1..<10 {
            guard case .failure(let error as DatabaseError) = outcome, error.isInterruption, error.sql == nil else { break }
            outcome = await cancelled(work)
        }
        return outcome
    }

    /// One try of ``cancelledWhileRunning(_:)``.
    ///
    /// The task is cancelled from a thread of its own, where the cancellation handler (the
    /// interruption) runs at once: on a loaded run, other tests can keep both threads of the
    /// cooperative pool busy for seconds, and a cancelling task waiting for one measured the
    /// pool, not the database. An unstructured task, because a thread cannot cancel a child.
    private static func cancelled(_ work: @escaping @Sendable (RunningFlag) async throws -> Void) async -> Outcome {
        let running = RunningFlag()
        let task = Task { await Outcome { try await work(running) } }
        Thread.detachNewThread {
            let deadline = ContinuousClock.now + .seconds(60)
            // Polling pace only: the loop waits for the flag.
            while !running.isSet, ContinuousClock.now < deadline { usleep(10_000) }
            // Pacing: the moment for the statement to begin; whether it had is in the outcome.
            usleep(100_000)
            task.cancel()
        }
        return await task.value
    }

}

/// Set by a piece of work on its connection's thread just before its long statement, so
/// that the cancellation comes while the statement runs. (That it was interrupted rather than
/// waited out shows in the outcome: an uninterrupted statement succeeds.)
final class RunningFlag: Sendable {
    private let state = Mutex(false)
    func set() { state.withLock { $0 = true } }
    var isSet: Bool { state.withLock { $0 } }
}
