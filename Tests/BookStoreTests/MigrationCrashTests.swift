import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A migration killed with SIGKILL halfway — no clean-up code runs — leaves the store as it
/// was, and the next migration removes the leftovers and completes.
@Suite("a killed migration")
struct MigrationCrashTests {
    /// SQLite: the killed run leaves its work folder beside the store; the PostgreSQL twin
    /// below leaves a shadow schema.
    @Test func leavesTheStoreWholeAndTheNextRunCompletes() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let path = directory.appendingPathComponent("bookstore.sqlite").path
        let url = "sqlite://\(path)"
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "3", "--count", "1500", "--store", url])
        #expect(seed.status == 0, "\(seed.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // Killed the moment the streamed step says it created its new store, from the thread
        // that reads the output: however fast the step runs, it is under way then.
        let trigger = WatchedProcess.Trigger(signal: SIGKILL) { $0.contains("step1.sqlite") && $0.contains("created store") }
        let process = try WatchedProcess(try BookStoreProcess.executable, ["migrate", "--store", url, "--log-level", "info"], trigger: trigger)
        defer { process.signal(SIGKILL) }
        let exit = await process.waitUntilExit(timeout: .seconds(60))
        #expect(process.triggered, "the migration never said it created the streamed step's store: \(process.output)")
        #expect(exit == 128 + SIGKILL, "exit status \(exit.map { "\($0)" } ?? "none: it had not ended a minute after it started"): \(process.output)")

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store must be as it was")
        #expect(try leftovers(in: directory).contains { $0.hasPrefix(".bookstore.sqlite.migration-") }, "the killed run's work folder is left behind")
        let status = try await BookStoreProcess.running(["status", "--store", url])
        #expect(status.stdout.contains("Store model version:   BookStore 3"))

        let again = try await BookStoreProcess.running(["migrate", "--store", url, "--log-level", "notice"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("removed the work folder of an interrupted migration"))
        #expect(try leftovers(in: directory).isEmpty)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE")?.int64 == 1504)
        #expect(try connection.scalar("SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL")?.int64 == 3012)
    }

    /// On PostgreSQL each step is swapped in whole: a run killed while a streamed step
    /// writes its shadow schema leaves the store at the version of its last completed step,
    /// row for row, and the abandoned shadow schemas beside it; the next run continues from
    /// them or drops them.
    @Test func onPostgreSQLLeavesTheStoreWholeAtItsLastCompletedStepAndTheNextRunCompletes() async throws {
        try await TestPostgres.withDatabase { url in
            let store = url.description
            // Large enough that the streamed step takes a while, now that most of it is SQL.
            let generated = 10_000
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "3", "--count", "\(generated)", "--store", store])
            #expect(seed.status == 0, "\(seed.stderr)")
            let before = try await StoreSnapshot(url)
            #expect(before.tables["zpublication"]?.count == generated + 4 + 1, "the columns and the publications")

            // The kill must land before the step is swapped in, however fast the step runs on
            // a given machine: a transaction of the test's own holds a share lock on a table the
            // swap drops, so the swap's transaction waits for it and never commits before the kill.
            guard case .postgres(let configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            let holder = try PostgresConnection(configuration: configuration)
            try holder.execute("BEGIN")
            try holder.execute(rawSQL: "LOCK TABLE \(configuration.quotedSchema).zpublication IN ACCESS SHARE MODE")

            let process = try WatchedProcess(try BookStoreProcess.executable, ["migrate", "--store", store, "--log-level", "warning"])
            defer { process.signal(SIGKILL) }
            // Wait until step 3 → 4 has written a batch of publications into a shadow schema,
            // then kill the process.
            var shadow: String?
            let deadline = ContinuousClock.now + .seconds(60)
            while shadow == nil, ContinuousClock.now < deadline {
                // A shadow schema may go between the listing and the count (the pass discards
                // its intermediate schema once its steps are done): looked at again.
                shadow = (try? await PostgresShadow.writing(of: url)) ?? nil
                if shadow == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            process.signal(SIGKILL)
            let exit = await process.waitUntilExit(timeout: .seconds(60))
            #expect(exit == 128 + SIGKILL, "exit status \(exit.map { "\($0)" } ?? "none"): \(process.output)")
            // A swap that was waiting on the lock now finds its client gone and rolls back.
            try holder.execute("ROLLBACK")
            let writing = try #require(shadow, "the migration had not started writing its shadow schema a minute after it started")
            #expect(writing.hasPrefix("public_migrating_"))

            // Whole at version 3, the last completed one: every table and row as they were.
            let after = try await StoreSnapshot(url)
            #expect(after.tables == before.tables, "the store must be as it was")
            // What step 3 → 4 wrote.
            let abandoned = after.schemas.filter { !before.schemas.contains($0) }
            #expect(
                abandoned.contains(writing) && abandoned.allSatisfy { $0.hasPrefix("public_migrating_") },
                "the killed run's shadow schemas are left behind"
            )
            let status = try await BookStoreProcess.running(["status", "--store", store])
            #expect(status.stdout.contains("Store model version:   BookStore 3"), "\(status.stdout)\(status.stderr)")

            let again = try await BookStoreProcess.running(["migrate", "--store", store, "--log-level", "notice"])
            #expect(again.status == 0, "\(again.stderr)")
            // Step 3 → 4 is continued from the killed run's shadow schema when the kill landed
            // while it wrote (its hooks declare their values: the two streamed steps are not
            // one pass); once its output was complete (the swap is held off, not the step),
            // the checkpoint is gone and the schema is removed.
            #expect(
                again.stderr.contains("resuming step 1/2 BookStore 3 → BookStore 4")
                    || again.stderr.contains("removed the shadow schema of an interrupted migration"),
                "\(again.stderr)"
            )
            let done = try await StoreSnapshot(url)
            #expect(done.schemas == before.schemas, "no shadow schema is left")
            let counts = try await PersistentStore.inspect(url) {
                try $0.rows(
                    """
                    SELECT (SELECT count(*) FROM zpublication WHERE zsynopsis = ztitle), (SELECT count(*) FROM zpage WHERE zpublication IS NOT NULL)
                    """
                ).map(\.values)
            }
            #expect(counts.first?.map(\.int64) == [Int64(generated + 4), Int64(2 * generated + 12)])
        }
    }
}

/// The shadow schemas of a PostgreSQL store's migrations.
enum PostgresShadow {
    /// A shadow schema of the store's that holds publications: a streamed step is under way.
    static func writing(of url: StoreURL) async throws -> String? {
        guard case .postgres(let configuration) = url.kind else {
            Issue.record("not a PostgreSQL store: \(url.kind)")
            return nil
        }
        let prefix = "\(configuration.schema)_migrating_"
        return try await PersistentStore.inspect(url) { connection in
            for shadow in try connection.rows(rawSQL: "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", [.text(prefix)]).compactMap({
                $0[0].text
            }) {
                let columns = try connection.rows(
                    rawSQL: """
                        SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'zpublication'
                        """,
                    [.text(shadow)]
                ).compactMap { $0[0].text }
                guard !columns.isEmpty else { continue }
                let rows = try connection.scalar(rawSQL: "SELECT count(*) FROM \(shadow.quotedIdentifier).zpublication")?.int64 ?? 0
                if rows > 0 { return shadow }
            }
            return nil
        }
    }
}
