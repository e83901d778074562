import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Another client writes the store while `bookstore migrate` runs its streamed step: the
/// write it is told succeeded is in the migrated store. The writes wait until the migration
/// ends (then land in the new version's tables) or are refused; none is acknowledged and
/// then dropped with the old store.
@Suite("other writers during a migration")
struct OtherWriterTests {
    static let generated = 20_000
    /// The rows the other client updates: near the start, the middle and the end.
    static let keys = [5, generated / 2, generated]

    @Test(arguments: TestEngine.allCases)
    func everyAcknowledgedWriteIsInTheMigratedStore(engine: TestEngine) async throws {
        try await Self.withStore(engine, writeWhileMigrating)
    }

    /// Runs `body` with a fresh store URL of `engine`, removed afterwards.
    static func withStore(_ engine: TestEngine, _ body: (StoreURL) async throws -> Void) async throws {
        switch engine {
        case .sqlite:
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            try await body(sqliteStoreURL(in: directory))
        case .postgres:
            try await TestPostgres.withDatabase { url in try await body(url) }
        }
    }

    /// A client that opened the store before the migration and writes after it: its write
    /// is in the migrated store, not in a file or tables that are gone.
    @Test(arguments: TestEngine.allCases)
    func aClientThatHadTheStoreOpenWritesIntoTheMigratedOne(engine: TestEngine) async throws {
        try await Self.withStore(engine, writeAcrossTheMigration)
    }

    private func writeAcrossTheMigration(_ url: StoreURL) async throws {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "2", "--count", "100", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let (executable, arguments, prelude) = try Self.interactiveClient(url)
        let client = try WatchedProcess(executable, arguments, readsInput: true)
        defer { client.signal(SIGKILL) }
        client.send(prelude + "UPDATE zbook SET zprice = 201, z_opt = z_opt + 1 WHERE z_pk = 5;\n")
        // The client has the store open, and its first write is in.
        var first: Double?
        // Five minutes bound a hang, however loaded the machine; the loop waits for the write.
        let deadline = ContinuousClock.now + .seconds(300)
        while first != 201, ContinuousClock.now < deadline {
            first = try await PersistentStore.inspect(url) { try $0.scalar("SELECT ZPRICE FROM ZBOOK WHERE Z_PK = 5")?.double }
            // Polling pace only.
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(first == 201, "the client's first write had not arrived five minutes after it was sent: \(client.output)")

        let migrate = try await BookStoreProcess.running(["migrate", "--store", store])
        #expect(migrate.status == 0, "\(migrate.stderr)")

        client.send("UPDATE zpublication SET zprice = 202, z_opt = z_opt + 1 WHERE z_pk = 5;\n")
        client.endInput()
        let status = await client.waitUntilExit(timeout: .seconds(60))
        #expect(status == 0, "\(client.output)")
        let price = try await PersistentStore.inspect(url) { try $0.scalar("SELECT ZPRICE FROM ZPUBLICATION WHERE Z_PK = 5")?.double }
        #expect(price == 202, "the write made after the migration went elsewhere: \(client.output)")
    }

    /// A process of the previous release whose store was migrated while it had it open: its
    /// next statement that no longer fits is told what happened, not "no such table".
    @Test(arguments: TestEngine.allCases)
    func aProcessOfThePreviousReleaseIsToldTheStoreWasMigrated(engine: TestEngine) async throws {
        try await Self.withStore(engine) { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "2", "--count", "20", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let v2 = try #require(try loadModels().versions.version(named: "BookStore 2"))
            let store = try await PersistentStore.open(url, model: v2, logger: quietLogger)
            let context = ManagedObjectContext(store: store, logger: quietLogger)
            #expect(try await context.count(for: FetchRequest(entityName: "Book")) >= 20, "the catalogue and the twenty generated books")

            let migrate = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            let error = await #expect(throws: StoreError.self) { _ = try await context.fetch(FetchRequest(entityName: "Book")) }
            #expect(error?.code == .migratedSinceOpened)
            #expect(
                error?.message.contains("migrated to model version 'BookStore 5' since this process opened it; this process runs 'BookStore 2'")
                    == true,
                "\(String(describing: error))"
            )
            #expect(error?.hint?.contains("deploy the release that runs model version 'BookStore 5'") == true)
            await store.close()
        }
    }

    /// A process of the previous release whose store was migrated while it had it open:
    /// its next save is refused with what happened even when every statement of it would
    /// fit the new tables (BookStore 4's publication is BookStore 5's without a synopsis),
    /// and nothing of it is written.
    @Test(arguments: TestEngine.allCases)
    func aSaveOfThePreviousReleaseThatFitsTheNewTablesIsRefused(engine: TestEngine) async throws {
        try await Self.withStore(engine) { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "4", "--count", "20", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let v4 = try #require(try loadModels().versions.version(named: "BookStore 4"))
            let store = try await PersistentStore.open(url, model: v4, logger: quietLogger)
            let context = ManagedObjectContext(store: store, logger: quietLogger)
            var request = FetchRequest(entityName: "Publication", predicate: try Predicate(format: "title == %@", "Generated book 7"))
            request.fetchLimit = 1
            let publication = try #require(try await context.fetch(request).first, "the seed has no 'Generated book 7'")
            publication.setValue(.string("Written before the migration"), forKey: "title")
            try await context.save()

            let migrate = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            // An insert: an update would be refused for the row the migration rewrote.
            let late = try context.insertObject(entityName: "Publication")
            late.setValue(.string("Written after the migration"), forKey: "title")
            late.setValue(.double(12.5), forKey: "price")
            let error = await #expect(throws: StoreError.self) { try await context.save() }
            #expect(error?.code == .migratedSinceOpened, "\(String(describing: error))")
            #expect(
                error?.message.contains("migrated to model version 'BookStore 5' since this process opened it; this process runs 'BookStore 4'")
                    == true,
                "\(String(describing: error))"
            )
            await store.close()

            let titles = try await PersistentStore.inspect(url) { connection in
                try connection.rows("SELECT ZTITLE FROM ZPUBLICATION WHERE ZTITLE LIKE 'Written %'").compactMap { $0[0].text }
            }
            #expect(titles == ["Written before the migration"], "the refused save was written, or the one before it is gone")
        }
    }

    /// SQLite only (a WAL's snapshots): a reader that began before the last commit keeps
    /// that commit in the WAL, where it cannot be written back into the file; the in-place
    /// step's copy of the store still holds it (SQLite's backup API then copies it, not the
    /// file's bytes), and so does the migrated store.
    @Test func aCommitAReaderKeepsInTheLogIsInTheMigratedStore() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = sqliteStoreURL(in: directory)
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "2", "--count", "100", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let (executable, arguments, prelude) = try Self.interactiveClient(url)
        let reader = try WatchedProcess(executable, arguments, readsInput: true)
        defer { reader.signal(SIGKILL) }
        reader.send(prelude + "BEGIN;\nSELECT 'snapshot', count(*) FROM zbook;\n")
        #expect(await reader.waitFor { $0.contains("snapshot|") }, "the reader did not start: \(reader.output)")
        let write = try await Self.otherClient(url, "UPDATE zbook SET zprice = 303.25, z_opt = z_opt + 1 WHERE z_pk = 7")
        #expect(write.status == 0, "\(write.stderr)")

        let migrate = try await BookStoreProcess.running(["migrate", "--store", store, "--log-level", "debug"])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect((migrate.stdout + migrate.stderr).contains("copying the store page by page"), "the copy did not fall back to the backup API")
        reader.send("COMMIT;\n")
        reader.endInput()
        _ = await reader.waitUntilExit(timeout: .seconds(60))
        let (price, version) = try await PersistentStore.inspect(url) { connection in
            (
                try connection.scalar("SELECT ZPRICE FROM ZPUBLICATION WHERE Z_PK = 7")?.double,
                try connection.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS IS NOT NULL")?.int64
            )
        }
        #expect(price == 303.25, "the commit the reader kept in the WAL is not in the migrated store")
        #expect(version == 104, "the store was not migrated to BookStore 5 whole")
    }

    /// SQLite only (POSIX locks): once the in-place step's copy of the store is made, the
    /// migration still holds the store: a process that opens and closes it meanwhile
    /// leaves its WAL and shared memory in place (it is not the last one), and a writer is
    /// still refused. Had the copy opened and closed a descriptor of the store, the
    /// process's locks on it would be gone, and the closing process would take the store
    /// for its own and remove them.
    @Test func theStoreStaysHeldAfterTheInPlaceCopy() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = sqliteStoreURL(in: directory)
        guard case .sqlite(let path) = url.kind else {
            Issue.record("not a SQLite store: \(url.kind)")
            return
        }
        // Stopped in its streamed pass, after the copy the in-place step ran on.
        let process = try await Self.migrationStoppedInItsStreamedStep(url, seedVersion: 2)
        defer { process.signal(SIGKILL) }

        #expect(process.output.contains("copied the store's bytes"), "the in-place copy was not the store's bytes: \(process.output)")
        let reader = try await BuiltCommand(systemTool: "sqlite3").run([path, "SELECT count(*) FROM zbook"])
        #expect(reader.status == 0, "\(reader.stderr)")
        #expect(
            FileManager.default.fileExists(atPath: path + "-shm"),
            "a process that closed the store took it for its own and removed its shared memory"
        )
        let writer = try await BuiltCommand(systemTool: "sqlite3").run([
            "-bail", "-cmd", ".timeout 200", path, "UPDATE zbook SET zprice = 1 WHERE z_pk = 7",
        ])
        #expect(writer.status != 0 && writer.stderr.contains("locked"), "a writer got into the store the migration holds: \(writer.stderr)")
        process.signal(SIGCONT)
        let status = await process.waitUntilExit(timeout: .seconds(180))
        #expect(status == 0, "\(process.output)")
    }

    /// Waits until `client` is blocked on the store's lock: on PostgreSQL its session waits
    /// for a lock (`pg_stat_activity`); on SQLite the `sqlite3` process sits in its busy
    /// handler's sleep (`/proc/<pid>/syscall`), the only sleep it makes. False after five
    /// minutes (a hang, not a slow machine) or when the client ended first (its write then
    /// did not wait); the last look comes after the time is up.
    static func waitUntilWaitingForTheStore(_ client: WatchedProcess, _ url: StoreURL) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(300)
        while client.isRunning {
            switch url.kind {
            case .postgres:
                let waiting = try await PersistentStore.inspect(url) { connection in
                    try connection.scalar(
                        """
                        SELECT count(*) FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE zpublication%'
                        """
                    )?.int64 ?? 0
                }
                if waiting > 0 { return true }
            case .sqlite:
                if sleepingInASystemCall(client.identifier) { return true }
            case .memory:
                preconditionFailure("an in-memory store has no other clients")
            }
            guard ContinuousClock.now < deadline else { break }
            // Polling pace only: the event itself is what the loop tests.
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Whether process `pid` is in `nanosleep`/`clock_nanosleep` (what SQLite's busy
    /// handler calls between attempts at a lock).
    static func sleepingInASystemCall(_ pid: Int32) -> Bool {
        #if arch(x86_64)
        let sleeps: Set<Substring> = ["35", "230"]
        #elseif arch(arm64)
        let sleeps: Set<Substring> = ["101", "115"]
        #else
        let sleeps: Set<Substring> = []
        #endif
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8),
            let number = text.split(separator: " ").first
        else { return false }
        return sleeps.contains(number)
    }

    /// `bookstore migrate` of a store seeded at `seedVersion` with ``generated`` books,
    /// stopped (SIGSTOP) once its streamed step has read its first batch; the caller sends
    /// SIGCONT, and SIGKILL when done.
    static func migrationStoppedInItsStreamedStep(_ url: StoreURL, seedVersion: Int) async throws -> WatchedProcess {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "\(seedVersion)", "--count", "\(generated)", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let trigger = WatchedProcess.Trigger(signal: SIGSTOP) { $0.contains("Migration progress of ") }
        let process = try WatchedProcess(try BookStoreProcess.executable, ["migrate", "--store", store, "--log-level", "debug"], trigger: trigger)
        #expect(await process.waitFor { _ in process.triggered }, "the streamed step never reported: \(process.output)")
        return process
    }

    /// A shell of the engine's reading statements from its standard input, and what to send first.
    static func interactiveClient(_ url: StoreURL) throws -> (URL, [String], String) {
        switch url.kind {
        case .sqlite(let path):
            return (try BuiltCommand(systemTool: "sqlite3").executable(), ["-bail", path], ".timeout 60000\n")
        case .postgres(let configuration):
            var arguments = [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", configuration.host ?? "127.0.0.1", "-p", "\(configuration.port ?? 5432)",
                "-d", configuration.database ?? "postgres",
            ]
            if let user = configuration.user { arguments += ["-U", user] }
            return (try BuiltCommand(systemTool: "psql").executable(), arguments, "SET search_path TO \(configuration.quotedSchema);\n")
        case .memory:
            preconditionFailure("an in-memory store has no other clients")
        }
    }

    /// The other client, a process of its own: `sqlite3` (waiting up to a minute for a
    /// lock, as a careful client does) or `psql`.
    static func otherClient(_ url: StoreURL, _ sql: String) async throws -> BuiltCommand.Output {
        switch url.kind {
        case .sqlite(let path):
            return try await BuiltCommand(systemTool: "sqlite3").run(["-bail", "-cmd", ".timeout 60000", path, sql])
        case .postgres(let configuration):
            var arguments = [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", configuration.host ?? "127.0.0.1", "-p", "\(configuration.port ?? 5432)",
                "-d", configuration.database ?? "postgres", "-c", "SET search_path TO \(configuration.quotedSchema); \(sql)",
            ]
            if let user = configuration.user { arguments += ["-U", user] }
            return try await BuiltCommand(systemTool: "psql").run(arguments)
        case .memory:
            preconditionFailure("an in-memory store has no other clients")
        }
    }

    private func writeWhileMigrating(_ url: StoreURL) async throws {
        // The migration is stopped as soon as its streamed step (BookStore 4 → 5, its custom
        // manager) has read its first batch; it goes on (SIGCONT) only once the other
        // client's write is seen waiting for the store the stopped migration holds.
        let process = try await Self.migrationStoppedInItsStreamedStep(url, seedVersion: 4)
        defer { process.signal(SIGKILL) }

        let keyList = Self.keys.map(String.init).joined(separator: ", ")
        let price = 101
        let (executable, arguments, prelude) = try Self.interactiveClient(url)
        let client = try WatchedProcess(executable, arguments, readsInput: true)
        defer { client.signal(SIGKILL) }
        client.send(prelude + "UPDATE zpublication SET zprice = \(price), z_opt = z_opt + 1 WHERE z_pk IN (\(keyList));\n")
        client.endInput()
        let waiting = try await Self.waitUntilWaitingForTheStore(client, url)
        #expect(waiting, "the other client's write was never seen waiting for the store: \(client.output)")
        #expect(process.isRunning, "the migration ended while stopped")
        process.signal(SIGCONT)
        let written = await client.waitUntilExit(timeout: .seconds(180))
        let status = await process.waitUntilExit(timeout: .seconds(180))
        #expect(status == 0, "\(process.output)")
        // The write waited for the migration (the clients wait up to a minute), then landed.
        #expect(written == 0, "the write made during the migration failed: \(client.output)")
        let expected = price

        let rows = try await PersistentStore.inspect(url) { connection in
            try connection.rows(rawSQL: "SELECT Z_PK, ZPRICE, ZSYNOPSIS FROM ZPUBLICATION WHERE Z_PK IN (\(keyList)) ORDER BY Z_PK").map(\.values)
        }
        #expect(rows.count == Self.keys.count)
        for row in rows {
            #expect(
                row[1].double == Double(expected),
                "row \(row[0]): price \(String(describing: row[1].double)), the acknowledged write set \(expected)"
            )
            #expect(row[2].text != nil, "row \(row[0]) was not migrated")
        }
    }
}
