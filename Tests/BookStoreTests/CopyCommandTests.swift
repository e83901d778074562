import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

@Suite("bookstore copy")
struct CopyCommandTests {
    /// Every row of the store's tables; of Z_METADATA the version and UUID (its property list
    /// names the engine, which a copy to another engine changes; the test compares the rest).
    func dump(_ url: StoreURL) async throws -> [String] {
        try await PersistentStore.inspect(url) { connection in
            var lines: [String] = []
            for (table, columns) in [("ZPUBLICATION", "*"), ("ZPAGE", "*"), ("Z_PRIMARYKEY", "*"), ("Z_METADATA", "Z_VERSION, Z_UUID")] {
                for row in try connection.rows(rawSQL: "SELECT \(columns) FROM \(table) ORDER BY 1") {
                    lines.append(table + ": " + (0..<row.count).map { "\(row[$0])" }.joined(separator: "|"))
                }
            }
            return lines
        }
    }

    /// From a SQLite store to a store of each engine: every row and key, the metadata (the
    /// store's UUID too) come across; the source is only read; the copy migrates.
    @Test(arguments: TestEngine.allCases)
    func aCopyKeepsEveryRowKeyAndTheMetadataAndThenMigrates(engine: TestEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 3, into: directory)
        let sourcePath = directory.appendingPathComponent("bookstore.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: sourcePath))
        try await engine.withStoreURL { target in
            let copy = try await BookStoreProcess.running(["copy", "--from", source.description, "--to", target.description])
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(copy.stdout.contains("model version BookStore 3"))
            let (copied, original) = (try await dump(target), try await dump(source))
            #expect(copied == original, "differs: \(Set(copied).symmetricDifference(original).sorted().prefix(6))")
            let (copiedMetadata, originalMetadata) = (try await PersistentStore.metadata(at: target), try await PersistentStore.metadata(at: source))
            #expect(copiedMetadata.storeType == (engine == .sqlite ? "SQLite" : "PostgreSQL"))
            #expect(
                copiedMetadata.versionHashes == originalMetadata.versionHashes
                    && copiedMetadata.versionIdentifiers == originalMetadata.versionIdentifiers
                    && copiedMetadata.storeUUID == originalMetadata.storeUUID && copiedMetadata.modelVersionName == originalMetadata.modelVersionName
            )
            #expect(try Data(contentsOf: URL(fileURLWithPath: sourcePath)) == before, "the source is only read")

            let again = try await BookStoreProcess.running(["copy", "--from", source.description, "--to", target.description])
            #expect(again.status != 0)
            #expect(again.stderr.contains("there is already a store") && again.stderr.contains("--replace"), "\(again.stderr)")

            let migrate = try await BookStoreProcess.running(["migrate", "--store", target.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            let names = try await PersistentStore.inspect(target) { connection in
                try connection.rows(rawSQL: "SELECT ZFIRSTNAME, ZLASTNAME FROM ZPUBLICATION ORDER BY Z_PK").map {
                    "\($0[0].text ?? "") \($0[1].text ?? "")"
                }
            }
            #expect(names == ["Bill Smith", "John Doe", "Jane Doe", "Jack Brown"])
        }
    }

    /// A version 1 store copied over a version 4 store of the engine with `--replace`: the
    /// target holds version 1's rows and nothing of its own is left, nothing beside it.
    @Test(arguments: TestEngine.allCases)
    func replaceSwapsTheWholeStore(engine: TestEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 1, into: directory)
        try await engine.withFixture(version: 4) { target, _ in
            let copy = try await BookStoreProcess.running(["copy", "--from", source.description, "--to", target.description, "--replace"])
            #expect(copy.status == 0, "\(copy.stderr)")
            let status = try await BookStoreProcess.running(["status", "--store", target.description])
            #expect(status.stdout.contains("Store model version:   BookStore\n"), "\(status.stdout)\(status.stderr)")
            let tables = try await PersistentStore.inspect(target) { connection in
                try connection.rows(
                    connection.dialect is PostgresDialect
                        ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                        : "SELECT name FROM sqlite_master WHERE type = 'table'"
                ).compactMap { $0[0].text?.uppercased() }.sorted()
            }
            #expect(!tables.contains("ZPUBLICATION") && tables.contains("ZBOOK"), "version 4's tables are gone: \(tables)")
            let books = try await PersistentStore.inspect(target) { try $0.scalar("SELECT count(*) FROM ZBOOK")?.int64 }
            #expect(books == 4)
            try await expectNoLeftovers(target)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func copyingAStoreOntoItselfIsRefused(engine: TestEngine) async throws {
        try await engine.withFixture(version: 2) { store, _ in
            let before = try await StoreSnapshot(store)
            let copy = try await BookStoreProcess.running(["copy", "--from", store.description, "--to", store.description, "--replace"])
            #expect(copy.status != 0)
            #expect(copy.stderr.contains("the same store"), "\(copy.stderr)")
            try await expectUnchanged(store, since: before)
        }
    }

    /// `--replace` onto a SQLite store that another connection has open is refused: that
    /// connection would go on writing into the replaced file, its writes acknowledged and
    /// lost, and its close could remove the new store's log. (A PostgreSQL store is replaced
    /// in a transaction that its other sessions' locks hold off.)
    @Test func replacingASQLiteStoreInUseIsRefused() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 1, into: directory)
        try await TestEngine.sqlite.withFixture(version: 4) { target, _ in
            guard case .sqlite(let path) = target.kind else {
                Issue.record("not a SQLite store: \(target.kind)")
                return
            }
            // Open as the service opens a store: in WAL mode, reading.
            let other = try SQLiteConnection(path: path, mode: .readWrite)
            defer { other.close() }
            try other.execute("PRAGMA journal_mode = WAL")
            let publications = try other.scalar("SELECT count(*) FROM ZPUBLICATION")?.int64
            let copy = try await BookStoreProcess.running(["copy", "--from", source.description, "--to", target.description, "--replace"])
            #expect(copy.status != 0)
            #expect(copy.stderr.contains("open in another connection") && copy.stderr.contains("nothing was replaced"), "\(copy.stderr)")
            #expect(try other.scalar("SELECT count(*) FROM ZPUBLICATION")?.int64 == publications)
            other.close()
            let status = try await BookStoreProcess.running(["status", "--store", target.description])
            #expect(status.stdout.contains("Store model version:   BookStore 4"), "\(status.stdout)\(status.stderr)")
        }
    }
}
