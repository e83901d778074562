import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A string holding NUL (U+0000): kept byte for byte where the engine can hold it (SQLite),
/// refused naming the attribute where it cannot (PostgreSQL `text`); never cut at the NUL.
@Suite("NUL in text")
struct NULInTextTests {
    static let withNUL = "a\u{0}b"

    @Test(arguments: [TestBackend.sqlite, .memory])
    func sqliteKeepsEveryByteAndMatchesTheWholeString(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            for title in [Self.withNUL, "a", "ab"] {
                try context.insertObject(entityName: "Book").setValue(.string(title), forKey: "title")
            }
            try await context.save()

            let reader = container.newContext()
            let titles = try await reader.fetch(FetchRequest(entityName: "Book")).compactMap { $0.value(forKey: "title").stringValue }
            #expect(Set(titles) == [Self.withNUL, "a", "ab"])
            let stored = try await container.store.database.read {
                try $0.scalar(rawSQL: "SELECT length(CAST(ZTITLE AS BLOB)) FROM ZBOOK WHERE Z_PK = 1", [])
            }
            #expect(stored?.int64 == 3, "all three bytes are in the store")

            let equal = FetchRequest(entityName: "Book", predicate: try Predicate(format: "title == %@", .string(Self.withNUL)))
            #expect(try await reader.fetch(equal).compactMap { $0.value(forKey: "title").stringValue } == [Self.withNUL])
            let containing = FetchRequest(entityName: "Book", predicate: try Predicate(format: "title CONTAINS[c] %@", .string("\u{0}")))
            #expect(try await reader.count(for: containing) == 1, "a NUL matches the one title that has it, not every title")
            // Needles with NUL, and ordinary needles on the value that has one: compared by bytes.
            for (format, needle, matches) in [
                ("title BEGINSWITH %@", "a\u{0}", [Self.withNUL]), ("title ENDSWITH %@", "\u{0}b", [Self.withNUL]),
                ("title CONTAINS %@", "\u{0}", [Self.withNUL]), ("title ENDSWITH %@", "b", [Self.withNUL, "ab"]),
                ("title ENDSWITH %@", "a", ["a"]), ("title CONTAINS %@", "b", [Self.withNUL, "ab"]),
                ("title BEGINSWITH[c] %@", "A", [Self.withNUL, "a", "ab"]), ("title ENDSWITH %@", "", [Self.withNUL, "a", "ab"]),
            ] {
                let request = FetchRequest(entityName: "Book", predicate: try Predicate(format: format, .string(needle)))
                #expect(
                    Set(try await reader.fetch(request).compactMap { $0.value(forKey: "title").stringValue }) == Set(matches),
                    "\(format) \(needle.debugDescription)"
                )
            }
        }
    }

    @Test func postgreSQLRefusesItNamingTheAttributeAndSavesNothing() async throws {
        try await withContainer(.postgres, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            try context.insertObject(entityName: "Book").setValue(.string("Fine"), forKey: "title")
            let book = try context.insertObject(entityName: "Book")
            book.setValue(.string(Self.withNUL), forKey: "title")
            let error = await #expect(throws: ValidationError.self) { try await context.save() }
            #expect(error?.issues.map(\.code) == [.unstorableCharacter])
            #expect(error?.issues.first?.key == "title")
            #expect(error?.issues.first?.entity == "Book")
            #expect(error?.description.contains("NUL") == true)
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Book")) == 0, "the whole save was refused")
        }
    }

    /// Below the framework's own check: a statement's text argument with NUL is refused by
    /// the connection rather than sent cut at the NUL, and a bulk insert names the column.
    @Test func postgreSQLStatementsRefuseTextWithNULRatherThanCutIt() async throws {
        try await withContainer(.postgres, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let statement = await #expect(throws: DatabaseError.self) {
                _ = try await container.store.database.read { try $0.scalar(rawSQL: "SELECT length($1::text)", [.text(Self.withNUL)]) }
            }
            #expect(statement?.sqlState == "22021")
            #expect(statement?.message.contains("argument 1") == true, "\(String(describing: statement))")
            let rows = (1...3).map { [DatabaseValue.integer(Int64($0)), .text($0 == 2 ? Self.withNUL : "ok")] }
            let insert = await #expect(throws: DatabaseError.self) {
                try await container.store.database.write { try $0.insertRows(into: "zshelf", columns: ["z_pk", "zlabel"], rows: rows) }
            }
            #expect(insert?.message.contains("zshelf.zlabel") == true, "\(String(describing: insert))")
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Shelf")) == 0)
        }
    }
}
