import Dispatch
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// A database's connection usage, read while reads and saves are held on their
/// connections and others queue behind them, on both engines.
@Suite struct ConnectionUsageTests {
    /// A read or save held on its connection until the test lets it go.
    final class Hold: Sendable {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        /// Blocks the connection's thread: the work is running, and stays so.
        func occupy() {
            started.signal()
            release.wait()
        }
    }

    @Test(arguments: TestEngine.allCases)
    func usageCountsHeldAndQueuedWork(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let database: any Database =
                switch url.kind {
                case .postgres(let configuration): try await PostgresDatabase.open(configuration, readerCount: 1)
                case .sqlite(let path): try await SQLiteDatabase.open(path: path, mode: .readWriteCreate, readerCount: 1)
                case .memory: preconditionFailure("no in-memory engine here")
                }
            do {
                try await database.read { _ in () }
                #expect(database.connectionUsage == ConnectionUsage(readers: .init(open: 1), writer: .init(open: 1)))

                let firstRead = Hold()
                let firstSave = Hold()
                async let heldRead: Void = database.read { _ in firstRead.occupy() }
                async let heldSave: Void = database.write { _ in firstSave.occupy() }
                await Self.waitUntil { firstRead.started.wait(timeout: .now()) == .success }
                await Self.waitUntil { firstSave.started.wait(timeout: .now()) == .success }
                #expect(database.connectionUsage == ConnectionUsage(readers: .init(open: 1, inUse: 1), writer: .init(open: 1, inUse: 1)))

                // One more of each: both wait for the held ones.
                async let queuedRead: Int = database.read { _ in 1 }
                async let queuedSave: Int = database.write { _ in 2 }
                let bothWaiting = ConnectionUsage(readers: .init(open: 1, inUse: 1, waiting: 1), writer: .init(open: 1, inUse: 1, waiting: 1))
                await Self.waitUntil { database.connectionUsage == bothWaiting }
                #expect(database.connectionUsage == bothWaiting)

                firstRead.release.signal()
                firstSave.release.signal()
                _ = try await (heldRead, heldSave)
                #expect(try await (queuedRead, queuedSave) == (1, 2))
                #expect(database.connectionUsage == ConnectionUsage(readers: .init(open: 1), writer: .init(open: 1)))
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }

    /// Polls `condition` until it holds, for up to a minute.
    static func waitUntil(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition(), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
