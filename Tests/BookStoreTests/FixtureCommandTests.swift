import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@testable import Persistence

/// `persistence fixture` writes a new store at a model version holding a JSON file's rows,
/// refuses a place already taken, and refuses rows the version cannot hold, naming them,
/// writing nothing.
@Suite struct FixtureCommandTests {
    static let models = BuiltCommand.packageRoot.appendingPathComponent("Migrations/BookStore.xcdatamodeld").path
    static let rows = """
        [
          {"entity": "Book", "label": "dune", "values": {"title": "Dune", "price": 9.5, "author": "Frank Herbert"}},
          {"entity": "Book", "label": "omega", "values": {"title": "Ωmega — déjà vu", "price": 12, "author": null}},
          {"entity": "Page", "values": {"number": 1, "text": "Chapter one"}, "relationships": {"book": "dune"}},
          {"entity": "Page", "values": {"number": 2, "text": null}, "relationships": {"book": ["dune"]}}
        ]
        """

    @Test(arguments: TestEngine.allCases)
    func writesTheRowsAtTheVersionAndRefusesATakenPlace(engine: TestEngine) async throws {
        let (folder, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let file = folder.appendingPathComponent("rows.json")
        try Self.rows.write(to: file, atomically: true, encoding: .utf8)
        try await engine.withStoreURL { url in
            let command = BuiltCommand("persistence")
            let arguments = ["fixture", "--models", Self.models, "--version", "BookStore 2", "--rows", file.path, "--store", url.description]
            let written = try await command.run(arguments)
            #expect(written.status == 0, "\(written.stdout)\(written.stderr)")
            #expect(written.stdout.contains("model version BookStore 2, 4 rows."), "\(written.stdout)")
            let kit = MigrationTestKit(chain: try BookStoreMigration.chain(models: try loadModels()), engine: engine, logger: quietLogger)
            #expect(try await kit.values("title", of: "Book", in: url) == [.string("Dune"), .string("Ωmega — déjà vu")])
            #expect(try await kit.values("author", of: "Book", in: url) == [.null, .string("Frank Herbert")].sorted { "\($0)" < "\($1)" })
            #expect(try await kit.values("number", of: "Page", in: url) == [.integer(1), .integer(2)])

            let before = try await StoreSnapshot(url)
            let again = try await command.run(arguments)
            #expect(again.status != 0)
            #expect(again.stderr.contains("a store is already at"), "\(again.stderr)")
            #expect(before.differences(from: try await StoreSnapshot(url)) == [], "the store must be as it was")
        }
    }

    /// A row the save refuses (a price over the model's maximum of 1 000) leaves no store
    /// behind: the place stays free for the fixed rows.
    @Test(arguments: TestEngine.allCases)
    func aRowTheSaveRefusesLeavesNoStore(engine: TestEngine) async throws {
        let model = try loadModels().model(version: 2)
        try await engine.withStoreURL { url in
            let rows = [FixtureRow("Book", ["title": .string("Too dear"), "price": .double(5_000)])]
            await #expect(throws: (any Error).self) { try await FixtureRow.write(rows, into: url, model: model, logger: quietLogger) }
            await #expect(throws: StoreError.self) { try await PersistentStore.metadata(at: url) }
            let fixed = [FixtureRow("Book", ["title": .string("Priced"), "price": .double(1.25)])]
            try await FixtureRow.write(fixed, into: url, model: model, logger: quietLogger)
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 2")
        }
    }

    /// A key a row does not have, a to-one naming two rows: refused, naming them.
    @Test func rowsReadFromJSONAreStrict() throws {
        let model = try loadModels().model(version: 2)
        let typo = Data(#"[{"entity": "Book", "value": {"title": "Dune"}}]"#.utf8)
        #expect(throws: FixtureError.self) { try FixtureRow.rows(fromJSON: typo, model: model) }
        let twoBooks = Data(
            #"""
            [{"entity": "Book", "label": "a", "values": {"title": "A", "price": 1}},
             {"entity": "Book", "label": "b", "values": {"title": "B", "price": 2}},
             {"entity": "Page", "values": {"number": 1}, "relationships": {"book": ["a", "b"]}}]
            """#.utf8
        )
        do {
            _ = try FixtureRow.rows(fromJSON: twoBooks, model: model)
            Issue.record("a to-one naming two rows was taken")
        } catch let error as FixtureError {
            #expect(error.description == "row 3 (Page): Page.book is to-one, and names 2 rows")
        }
        let decimals = try FixtureRow.rows(fromJSON: Data(#"[{"entity": "Book", "values": {"title": "T", "price": 9.95}}]"#.utf8), model: model)
        #expect(decimals.first?.values["price"] == .double(9.95))
    }

    @Test func rowsTheVersionCannotHoldAreRefusedAndNothingIsWritten() async throws {
        let (folder, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let file = folder.appendingPathComponent("rows.json")
        // BookStore (1) has no author yet.
        try Self.rows.write(to: file, atomically: true, encoding: .utf8)
        let store = folder.appendingPathComponent("fixture.sqlite")
        let refused = try await BuiltCommand("persistence").run([
            "fixture", "--models", Self.models, "--version", "BookStore", "--rows", file.path, "--store", "sqlite://\(store.path)",
        ])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("row 1: 'BookStore' has no attribute Book.author"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store.path), "nothing is written")
    }
}
