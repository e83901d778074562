import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

@Suite("bookstore copy")
struct CopyCommandTests {
    func dump(_ path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        var lines: [String] = []
        for table in ["ZPUBLICATION", "ZPAGE", "Z_PRIMARYKEY", "Z_METADATA"] {
            for row in try connection.rows("SELECT * FROM \(table) ORDER BY 1") {
                lines.append(table + ": " + (0..<row.count).map { "\(row[$0])" }.joined(separator: "|"))
            }
        }
        return lines
    }

    @Test func aCopyKeepsEveryRowKeyAndTheMetadataAndThenMigrates() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 3, into: directory)
        let sourcePath = directory.appendingPathComponent("bookstore.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: sourcePath))
        let copyPath = directory.appendingPathComponent("copy.sqlite").path

        let copy = try BookStoreProcess.run(["copy", "--from", source.description, "--to", "sqlite://\(copyPath)"])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout.contains("model version BookStore 3"))
        #expect(try dump(copyPath) == (try dump(sourcePath)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: sourcePath)) == before, "the source is only read")

        let again = try BookStoreProcess.run(["copy", "--from", source.description, "--to", "sqlite://\(copyPath)"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("there is already a store") && again.stderr.contains("--replace"))

        let migrate = try BookStoreProcess.run(["migrate", "--store", "sqlite://\(copyPath)"])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let connection = try SQLiteConnection(path: copyPath, mode: .readOnly)
        let names = try connection.rows("SELECT ZFIRSTNAME, ZLASTNAME FROM ZPUBLICATION ORDER BY Z_PK").map { "\($0[0].text ?? "") \($0[1].text ?? "")" }
        #expect(names == ["Bill Smith", "John Doe", "Jane Doe", "Jack Brown"])
    }

    /// A version 1 store copied over a version 4 store of the engine with `--replace`: the
    /// target holds version 1's rows and nothing of its own is left, nothing beside it.
    @Test(arguments: MigrationEngine.allCases)
    func replaceSwapsTheWholeStore(engine: MigrationEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 1, into: directory)
        try await engine.withFixture(version: 4) { target, _ in
            let copy = try BookStoreProcess.run(["copy", "--from", source.description, "--to", target.description, "--replace"])
            #expect(copy.status == 0, "\(copy.stderr)")
            let status = try BookStoreProcess.run(["status", "--store", target.description])
            #expect(status.stdout.contains("Store model version:   BookStore\n"), "\(status.stdout)\(status.stderr)")
            let tables = try await PersistentStore.inspect(target) { connection in
                try connection.rows(connection.dialect == .postgres
                    ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                    : "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0].text?.uppercased() }.sorted()
            }
            #expect(!tables.contains("ZPUBLICATION") && tables.contains("ZBOOK"), "version 4's tables are gone: \(tables)")
            let books = try await PersistentStore.inspect(target) { try $0.scalar("SELECT count(*) FROM ZBOOK")?.int64 }
            #expect(books == 4)
            try await expectNoLeftovers(target)
        }
    }

    @Test(arguments: MigrationEngine.allCases)
    func copyingAStoreOntoItselfIsRefused(engine: MigrationEngine) async throws {
        try await engine.withFixture(version: 2) { store, _ in
            let before = try await StoreSnapshot(store)
            let copy = try BookStoreProcess.run(["copy", "--from", store.description, "--to", store.description, "--replace"])
            #expect(copy.status != 0)
            #expect(copy.stderr.contains("the same store"), "\(copy.stderr)")
            try await expectUnchanged(store, since: before)
        }
    }
}
