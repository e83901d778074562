import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

/// A migration killed with SIGKILL halfway — no clean-up code runs — leaves the store as it
/// was, and the next migration removes the leftovers and completes.
@Suite("a killed migration")
struct MigrationCrashTests {
    @Test func leavesTheStoreWholeAndTheNextRunCompletes() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let path = directory.appendingPathComponent("bookstore.sqlite").path
        let url = "sqlite://\(path)"
        let seed = try BookStoreProcess.run(["seed", "--model-version", "3", "--count", "1500", "--store", url])
        #expect(seed.status == 0, "\(seed.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let process = Process()
        process.executableURL = try BookStoreProcess.executable
        process.arguments = ["migrate", "--store", url, "--log-level", "warning"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until the streamed step is writing its new store, then kill the process.
        var writing = false
        for _ in 0..<3_000 where !writing {
            let folders = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".bookstore.sqlite.migration-") }
            writing = folders.contains { folder in
                // A folder may vanish between the two listings; that is not yet "writing".
                let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? []
                return files.contains { $0.hasPrefix("step1.sqlite") }
            }
            if !writing { usleep(10_000) }
        }
        #expect(writing, "the migration never started writing its new store")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store must be as it was")
        #expect(try leftovers(in: directory).contains { $0.hasPrefix(".bookstore.sqlite.migration-") }, "the killed run's work folder is left behind")
        let status = try BookStoreProcess.run(["status", "--store", url])
        #expect(status.stdout.contains("Store model version:   BookStore 3"))

        let again = try BookStoreProcess.run(["migrate", "--store", url, "--log-level", "notice"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("removed the work folder of an interrupted migration"))
        #expect(try leftovers(in: directory).isEmpty)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE")?.int64 == 1504)
        #expect(try connection.scalar("SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL")?.int64 == 3012)
    }

    /// On PostgreSQL each step is swapped in whole: a run killed while a streamed step
    /// writes its shadow schema leaves the store at the version of its last completed step,
    /// row for row, and the abandoned shadow schema beside it; the next run drops it.
    @Test func onPostgreSQLLeavesTheStoreWholeAtItsLastCompletedStepAndTheNextRunCompletes() async throws {
        try await TestPostgres.withDatabase { url in
            let store = url.description
            let seed = try BookStoreProcess.run(["seed", "--model-version", "3", "--count", "1500", "--store", store])
            #expect(seed.status == 0, "\(seed.stderr)")
            let before = try await PostgresContent(url)
            #expect(before.tables["zpublication"]?.count == 1504 + 1, "the columns and 1504 publications")

            let process = Process()
            process.executableURL = try BookStoreProcess.executable
            process.arguments = ["migrate", "--store", store, "--log-level", "warning"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Wait until the first streamed step (3 → 4: no synopsis yet) has written a batch
            // of publications into its shadow schema, then kill the process.
            var shadow: String?
            for _ in 0..<3_000 where shadow == nil {
                shadow = try await PostgresContent.writingShadow(of: url)
                if shadow == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let abandoned = try #require(shadow, "the migration never started writing its shadow schema")
            #expect(abandoned.hasPrefix("public_migrating_"))

            // Whole at version 3, the last completed one: every table and row as they were.
            let after = try await PostgresContent(url)
            #expect(after.tables == before.tables, "the store must be as it was")
            #expect(after.schemas == (before.schemas + [abandoned]).sorted(), "the killed run's shadow schema is left behind")
            let status = try BookStoreProcess.run(["status", "--store", store])
            #expect(status.stdout.contains("Store model version:   BookStore 3"), "\(status.stdout)\(status.stderr)")

            let again = try BookStoreProcess.run(["migrate", "--store", store, "--log-level", "notice"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("removed the shadow schema of an interrupted migration"))
            #expect(again.stderr.contains(abandoned))
            let done = try await PostgresContent(url)
            #expect(done.schemas == before.schemas, "no shadow schema is left")
            let counts = try await PostgresContent.rows(url, """
                SELECT (SELECT count(*) FROM zpublication WHERE zsynopsis = ztitle), (SELECT count(*) FROM zpage WHERE zpublication IS NOT NULL)
                """)
            #expect(counts.first?.map(\.int64) == [1504, 3012])
        }
    }
}

/// A PostgreSQL store's content, read on a session of its own: the database's schemas
/// and every table of the store's schema, its columns and then its rows in key order.
struct PostgresContent {
    var schemas: [String] = []
    var tables: [String: [String]] = [:]

    init(_ url: StoreURL) async throws {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("not a PostgreSQL store") }
        let schema = configuration.schema
        (schemas, tables) = try await Self.read(url) { connection in
            let schemas = try connection.rows("SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1")
                .compactMap { $0[0].text }
            var tables: [String: [String]] = [:]
            for table in try connection.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [.text(schema)]).compactMap({ $0[0].text }) {
                let columns = try connection.rows("""
                    SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position
                    """, [.text(schema), .text(table)]).map { "\($0[0].text ?? "?") \($0[1].text ?? "?")" }
                let order = (1...max(columns.count, 1)).map(String.init).joined(separator: ", ")
                let rows = try connection.rows("SELECT * FROM \(PostgresConfiguration.quoteIdentifier(table)) ORDER BY \(order)").map { row in
                    row.values.map { value in
                        if case .blob(let bytes) = value { return "x'" + bytes.map { String(format: "%02x", $0) }.joined() + "'" }
                        return "\(value)"
                    }.joined(separator: " | ")
                }
                tables[table] = [columns.joined(separator: ", ")] + rows
            }
            return (schemas, tables)
        }
    }

    /// A shadow schema of the store's that holds publications of version 4's layout (no
    /// synopsis yet): the first streamed step is under way.
    static func writingShadow(of url: StoreURL) async throws -> String? {
        guard case .postgres(let configuration) = url.kind else { return nil }
        let prefix = "\(configuration.schema)_migrating_"
        return try await read(url) { connection in
            for shadow in try connection.rows("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", [.text(prefix)]).compactMap({ $0[0].text }) {
                let columns = try connection.rows("""
                    SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'zpublication'
                    """, [.text(shadow)]).compactMap { $0[0].text }
                guard !columns.isEmpty, !columns.contains("zsynopsis") else { continue }
                let rows = try connection.scalar("SELECT count(*) FROM \(PostgresConfiguration.quoteIdentifier(shadow)).zpublication")?.int64 ?? 0
                if rows > 0 { return shadow }
            }
            return nil
        }
    }

    static func rows(_ url: StoreURL, _ sql: String) async throws -> [[DatabaseValue]] {
        try await read(url) { try $0.rows(sql).map(\.values) }
    }

    private static func read<T: Sendable>(_ url: StoreURL, _ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("not a PostgreSQL store") }
        let database = try await PostgresDatabase.open(configuration, readerCount: 0, readOnly: true)
        do {
            let result = try await database.read(body)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }
}
