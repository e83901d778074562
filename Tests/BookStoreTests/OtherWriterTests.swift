import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

/// Another client writes the store while `bookstore migrate` runs its streamed step: every
/// write it is told succeeded is in the migrated store. The writes wait until the migration
/// ends (then land in the new version's tables) or are refused; none is acknowledged and
/// then dropped with the old store.
@Suite("other writers during a migration")
struct OtherWriterTests {
    static let generated = 20_000
    /// The rows the other client updates: near the start, the middle and the end.
    static let keys = [5, generated / 2, generated]

    @Test(arguments: MigrationEngine.allCases)
    func everyAcknowledgedWriteIsInTheMigratedStore(engine: MigrationEngine) async throws {
        switch engine {
        case .sqlite:
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            try await writeWhileMigrating(sqliteStoreURL(in: directory))
        case .postgres:
            try await TestPostgres.withDatabase { url in try await writeWhileMigrating(url) }
        }
    }

    /// A client that opened the store before the migration and writes after it: its write
    /// is in the migrated store, not in a file or tables that are gone.
    @Test(arguments: MigrationEngine.allCases)
    func aClientThatHadTheStoreOpenWritesIntoTheMigratedOne(engine: MigrationEngine) async throws {
        switch engine {
        case .sqlite:
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            try await writeAcrossTheMigration(sqliteStoreURL(in: directory))
        case .postgres:
            try await TestPostgres.withDatabase { url in try await writeAcrossTheMigration(url) }
        }
    }

    private func writeAcrossTheMigration(_ url: StoreURL) async throws {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "2", "--count", "100", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let (executable, arguments, prelude) = try Self.interactiveClient(url)
        let client = try WatchedProcess(executable, arguments, readsInput: true)
        defer { kill(client.identifier, SIGKILL) }
        client.send(prelude + "UPDATE zbook SET zprice = 201, z_opt = z_opt + 1 WHERE z_pk = 5;\n")
        // The client has the store open, and its first write is in.
        var first: Double?
        for _ in 0..<500 where first != 201 {
            first = try await PersistentStore.inspect(url) { try $0.scalar("SELECT ZPRICE FROM ZBOOK WHERE Z_PK = 5")?.double }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(first == 201, "the client's first write never arrived: \(client.output)")

        let migrate = try await BookStoreProcess.running(["migrate", "--store", store])
        #expect(migrate.status == 0, "\(migrate.stderr)")

        client.send("UPDATE zpublication SET zprice = 202, z_opt = z_opt + 1 WHERE z_pk = 5;\n")
        client.endInput()
        let status = await client.waitUntilExit(timeout: .seconds(60))
        #expect(status == 0, "\(client.output)")
        let price = try await PersistentStore.inspect(url) { try $0.scalar("SELECT ZPRICE FROM ZPUBLICATION WHERE Z_PK = 5")?.double }
        #expect(price == 202, "the write made after the migration went elsewhere: \(client.output)")
    }

    /// A shell of the engine's reading statements from its standard input, and what to send first.
    static func interactiveClient(_ url: StoreURL) throws -> (URL, [String], String) {
        switch url.kind {
        case .sqlite(let path):
            return (try BuiltCommand(systemTool: "sqlite3").executable(), ["-bail", path], ".timeout 60000\n")
        case .postgres(let configuration):
            var arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", configuration.host ?? "127.0.0.1", "-p", "\(configuration.port ?? 5432)",
                             "-d", configuration.database ?? "postgres"]
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
            var arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", configuration.host ?? "127.0.0.1", "-p", "\(configuration.port ?? 5432)",
                             "-d", configuration.database ?? "postgres", "-c", "SET search_path TO \(configuration.quotedSchema); \(sql)"]
            if let user = configuration.user { arguments += ["-U", user] }
            return try await BuiltCommand(systemTool: "psql").run(arguments)
        case .memory:
            preconditionFailure("an in-memory store has no other clients")
        }
    }

    private func writeWhileMigrating(_ url: StoreURL) async throws {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "4", "--count", "\(Self.generated)", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let process = try WatchedProcess(try BookStoreProcess.executable, ["migrate", "--store", store, "--log-level", "info"])
        defer { kill(process.identifier, SIGKILL) }
        // The streamed step (BookStore 4 → 5, its custom manager) is running.
        #expect(await process.waitFor { $0.contains("Migration progress:") }, "the streamed step never reported: \(process.output)")

        var acknowledged: [Int] = []
        var duringTheMigration = 0
        let keyList = Self.keys.map(String.init).joined(separator: ", ")
        for price in 101...103 {
            let migrating = process.isRunning
            let update = try await Self.otherClient(url, "UPDATE zpublication SET zprice = \(price), z_opt = z_opt + 1 WHERE z_pk IN (\(keyList))")
            guard update.status == 0 else { continue }
            acknowledged.append(price)
            if migrating { duringTheMigration += 1 }
        }
        let status = await process.waitUntilExit(timeout: .seconds(180))
        #expect(status == 0, "\(process.output)")
        #expect(duringTheMigration >= 1, "no write was made while the migration ran")
        let last = try #require(acknowledged.last, "every write was refused")

        let rows = try await PersistentStore.inspect(url) { connection in
            try connection.rows("SELECT Z_PK, ZPRICE, ZSYNOPSIS FROM ZPUBLICATION WHERE Z_PK IN (\(keyList)) ORDER BY Z_PK").map(\.values)
        }
        #expect(rows.count == Self.keys.count)
        for row in rows {
            #expect(row[1].double == Double(last), "row \(row[0]): price \(String(describing: row[1].double)), the last acknowledged write set \(last)")
            #expect(row[2].text != nil, "row \(row[0]) was not migrated")
        }
    }
}
