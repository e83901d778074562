import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// SIGINT and SIGTERM stop `bookstore migrate` cleanly: the migration is cancelled (a
/// statement waiting in the database is interrupted), its work removed, the store left
/// whole, where it stands said, and the command ends with 130 or 143; the next run completes.
@Suite("a migration stopped by a signal")
struct MigrateSignalTests {
    static let generated = 20_000

    static let cases: [(TestEngine, Int32)] = [(.sqlite, SIGTERM), (.sqlite, SIGINT), (.postgres, SIGTERM), (.postgres, SIGINT)]

    @Test(arguments: cases)
    func cleansUpSaysWhereTheStoreStandsAndTheNextRunCompletes(engine: TestEngine, signal: Int32) async throws {
        switch engine {
        case .sqlite:
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            try await stopAndResume(sqliteStoreURL(in: directory), engine: engine, signal: signal)
        case .postgres:
            try await TestPostgres.withDatabase { url in try await stopAndResume(url, engine: engine, signal: signal) }
        }
    }

    private func stopAndResume(_ url: StoreURL, engine: TestEngine, signal: Int32) async throws {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "3", "--count", "\(Self.generated)", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let before = try await StoreSnapshot(url)

        // PostgreSQL: a transaction of the test's own holds a lock the swap of the first step
        // needs, so the migration waits inside the database until the signal's cancellation
        // interrupts it; without that, it would wait as long as the lock is held.
        var holder: PostgresConnection?
        if case .postgres(let configuration) = url.kind {
            let connection = try PostgresConnection(configuration: configuration)
            try connection.execute("BEGIN")
            try connection.execute(rawSQL: "LOCK TABLE \(configuration.quotedSchema).zpublication IN ACCESS SHARE MODE")
            holder = connection
        }
        // SQLite: the signal goes as soon as the first streamed step has created its new store,
        // from the thread that reads the output, whatever the tests beside this one keep busy.
        let trigger: WatchedProcess.Trigger? =
            engine == .sqlite
            ? WatchedProcess.Trigger(signal: signal) { $0.contains("step1.sqlite") && $0.contains("created store") }
            : nil
        let process = try WatchedProcess(try BookStoreProcess.executable, ["migrate", "--store", store, "--log-level", "info"], trigger: trigger)
        // Whatever fails below, nothing outlives the test.
        defer {
            process.signal(SIGKILL)
            holder?.close()
        }
        switch engine {
        case .sqlite:
            #expect(await process.waitFor { _ in process.triggered }, "the migration never started its first step: \(process.output)")
        case .postgres:
            #expect(try await Self.waitForALockWait(url), "the migration never waited on the test's lock: \(process.output)")
            process.signal(signal)
        }
        // Stopped rather than run to its end: the output below says the migration was
        // cancelled with two steps to go. (On PostgreSQL it could not end while the test
        // holds its lock.) A minute is the outer limit of the wait, not a measure.
        let status = await process.waitUntilExit(timeout: .seconds(60))
        try holder?.execute("ROLLBACK")
        let output = process.output
        #expect(status == 128 + signal, "exit status \(status.map { "\($0)" } ?? "none: it had not exited a minute after the signal"): \(output)")
        #expect(output.contains("\(signal == SIGINT ? "SIGINT" : "SIGTERM") received: cancelling the migration"), "\(output)")
        #expect(output.contains("the migration was cancelled"), "\(output)")
        #expect(output.contains("The store is at model version BookStore 3; 2 steps remain to BookStore 5."), "\(output)")

        try await expectUnchanged(url, since: before)

        let again = try await BookStoreProcess.running(["migrate", "--store", store, "--log-level", "warning"])
        #expect(again.status == 0, "\(again.stderr)")
        try await expectNoLeftovers(url)
        let counts = try await PersistentStore.inspect(url) {
            try $0.rows(
                """
                SELECT (SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE), (SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL)
                """
            ).map(\.values)
        }
        #expect(counts.first?.map(\.int64) == [Int64(Self.generated + 4), Int64(2 * Self.generated + 12)])
    }

    /// Waits until a session of the store's database waits for a lock.
    static func waitForALockWait(_ url: StoreURL) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let waiting = try await PersistentStore.inspect(url) { connection in
                try connection.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")?.int64
                    ?? 0
            }
            if waiting > 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
