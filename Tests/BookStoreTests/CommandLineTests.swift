import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Runs the built `bookstore` executable, as a user would, without the test shell's
/// `BOOKSTORE_STORE`.
enum BookStoreProcess {
    static let command = BuiltCommand("bookstore", unsetEnvironment: ["BOOKSTORE_STORE", "BOOKSTORE_MIGRATION_STORE", "BOOKSTORE_WRITE_KEY_FILE"])

    static var executable: URL {
        get throws { try command.executable() }
    }

    /// Runs it on a thread of its own: the test's task waits without holding a thread of
    /// the cooperative pool (two on a two-core machine), which tests running beside it need;
    /// a test waiting for a child on one starved the in-process services of other tests.
    static func running(_ arguments: [String]) async throws -> BuiltCommand.Output {
        try await command.run(arguments)
    }

    /// Runs it where `small` is mounted, for stores on it (``SmallFileSystem/launching(_:_:in:)``).
    static func running(_ arguments: [String], on small: SmallFileSystem) async throws -> BuiltCommand.Output {
        try await command.runningOn(small).run(arguments)
    }
}

@Suite("bookstore command")
struct CommandLineTests {
    @Test(arguments: TestEngine.allCases)
    func seedVersionOneWritesTheBooksAndCoreDataTables(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            #expect(seed.stdout.contains("4 books"))

            let (titles, pages, keys, metadata) = try await PersistentStore.inspect(url) { connection in
                (
                    try connection.rows(rawSQL: "SELECT ZTITLE, ZPRICE FROM ZBOOK ORDER BY Z_PK").map { "\($0[0].text ?? "") \($0[1].double ?? -1)" },
                    try connection.scalar("SELECT count(*) FROM ZPAGE WHERE ZBOOK IS NOT NULL")?.int64,
                    try connection.rows(rawSQL: "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
                        "\($0[0].text ?? "")=\($0[1].int64 ?? -1)"
                    },
                    try connection.scalar("SELECT count(*) FROM Z_METADATA")?.int64
                )
            }
            #expect(titles == ["The first book 10.0", "The second book 15.0", "The third book 10.0", "The fourth book 12.0"])
            #expect(pages == 12)
            #expect(keys == ["Book=4", "Page=12"])
            #expect(metadata == 1)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func statusNamesTheVersionOfEverySeededStore(engine: TestEngine) async throws {
        for version in 1...5 {
            try await engine.withStoreURL { store in
                let url = store.description
                let seed = try await BookStoreProcess.running(["seed", "--model-version", "\(version)", "--store", url])
                #expect(seed.status == 0, "\(seed.stderr)")
                let status = try await BookStoreProcess.running(["status", "--store", url])
                #expect(status.status == 0, "\(status.stderr)")
                let name = version == 1 ? "BookStore" : "BookStore \(version)"
                #expect(status.stdout.contains("Store model version:   \(name)\n"))
                #expect(status.stdout.contains("Current model version: BookStore 5"))
                #expect(status.stdout.contains("Compatible:            \(version == 5 ? "yes" : "no")"))
            }
        }
    }

    /// SQLite: files that are no store (missing, noise, another app's database). A PostgreSQL
    /// schema without a store is tested by the metadata tests.
    @Test func storesThatCannotBeOpenedAreClearErrorsAndStayUntouched() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let missing = directory.appendingPathComponent("missing.sqlite").path
        let missingRun = try await BookStoreProcess.running(["status", "--store", "sqlite://\(missing)"])
        #expect(missingRun.status != 0)
        #expect(missingRun.stderr.contains("there is no store at"))
        #expect(missingRun.stderr.contains("bookstore seed"), "\(missingRun.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))

        let garbage = directory.appendingPathComponent("garbage.sqlite")
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try bytes.write(to: garbage)
        let garbageRun = try await BookStoreProcess.running(["status", "--store", "sqlite://\(garbage.path)"])
        #expect(garbageRun.status != 0)
        #expect(garbageRun.stderr.contains("not a SQLite database"))
        #expect(try Data(contentsOf: garbage) == bytes)

        // A SQLite database of another app: no Z_METADATA.
        let other = directory.appendingPathComponent("other.sqlite").path
        do {
            let connection = try SQLiteConnection(path: other, mode: .readWriteCreate)
            try connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: other))
        let otherRun = try await BookStoreProcess.running(["status", "--store", "sqlite://\(other)"])
        #expect(otherRun.status != 0)
        #expect(otherRun.stderr.contains("not a store"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == before)
    }

    @Test(arguments: TestEngine.allCases)
    func resetRefusesWithoutYesAndSeedRefusesToOverwrite(engine: TestEngine) async throws {
        try await engine.withStoreURL { store in
            let url = store.description
            #expect(try await BookStoreProcess.running(["seed", "--model-version", "2", "--store", url]).status == 0)

            let refused = try await BookStoreProcess.running(["reset", "--store", url])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--yes"))
            #expect(try await BookStoreProcess.running(["status", "--store", url]).stdout.contains("BookStore 2\n"))

            let again = try await BookStoreProcess.running(["seed", "--model-version", "3", "--store", url])
            #expect(again.status != 0)
            #expect(again.stderr.contains("already exists"))

            let reset = try await BookStoreProcess.running(["reset", "--yes", "--model-version", "4", "--seed", "--store", url])
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(try await BookStoreProcess.running(["status", "--store", url]).stdout.contains("BookStore 4\n"))
            let titles = try await PersistentStore.inspect(store) {
                try $0.rows("SELECT ZTITLE FROM ZPUBLICATION ORDER BY Z_PK").compactMap { $0[0].text }
            }
            #expect(titles == ["The first book", "The second book", "The third book", "The fourth book"])
        }
    }

    /// SQLite only: `reset` unlinks the store's files, and a process that still has them open
    /// writes on into files no path leads to any more — its writes were acknowledged and lost.
    /// A PostgreSQL store's tables are dropped under the other session, whose next statement
    /// fails or lands in the new store: nothing is acknowledged and lost there.
    @Test func resetRefusesWhileAnotherProcessHasTheSQLiteStoreOpen() async throws {
        try await TestEngine.sqlite.withStoreURL(fileName: "bookstore.sqlite") { store in
            guard case .sqlite(let path) = store.kind else { preconditionFailure("a SQLite store") }
            #expect(try await BookStoreProcess.running(["seed", "--store", store.description]).status == 0)
            let container = try await PersistentContainer.open(model: try loadModels().current, store: store, logger: quietLogger)
            let refused = try await BookStoreProcess.running(["reset", "--yes", "--store", store.description])
            #expect(refused.status != 0)
            #expect(
                refused.stderr.contains("is open in another") && refused.stderr.lowercased().contains("stop what has it open"),
                "says what is in the way and what to do: \(refused.stderr)"
            )
            // Still the store the open container writes to: a row saved now is in the file.
            let context = container.newContext()
            let publication = try context.insertObject(entityName: "Publication")
            publication.setValue("Written after the refused reset", forKey: "title")
            publication.setValue(12.5, forKey: "price")
            try await context.save()
            await container.store.close()
            let titles = try await PersistentStore.inspect(store) { try $0.rows("SELECT ZTITLE FROM ZPUBLICATION").compactMap { $0[0].text } }
            #expect(titles.count == 5 && titles.contains("Written after the refused reset"))

            let reset = try await BookStoreProcess.running(["reset", "--yes", "--store", store.description])
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(try await PersistentStore.inspect(store) { try $0.scalar("SELECT count(*) FROM ZPUBLICATION")?.int64 } == 0)
            #expect(FileManager.default.fileExists(atPath: path))

            // A file that is no SQLite database is no store: reset leaves it.
            let other = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("notes.txt").path
            try Data("shopping list\n".utf8).write(to: URL(fileURLWithPath: other))
            let notAStore = try await BookStoreProcess.running(["reset", "--yes", "--store", "sqlite://\(other)"])
            #expect(notAStore.status != 0)
            #expect(notAStore.stderr.contains("not a SQLite database"), "\(notAStore.stderr)")
            #expect(try String(contentsOfFile: other, encoding: .utf8) == "shopping list\n")
        }
    }
}
