import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The lightweight steps of the real BookStore model chain, run in place on SQLite and PostgreSQL.
@Suite("In-place migration: BookStore versions")
struct InPlaceMigrationBookStoreTests {
    typealias F = InPlaceFixtures

    static let books: [(title: String, price: Double, pages: [Int])] = [
        ("The first book", 10, [1, 2, 3]), ("The second book", 15, [1, 2]), ("The third book", 10, [1]), ("The fourth book", 12, []),
    ]

    func versions() throws -> [ManagedObjectModel] {
        try VersionedModel(contentsOf: ModelFixtures.bookStore).versions
    }

    /// A store of BookStore 1 (or 2, with authors) holding the book's four books and their pages.
    func writeBooks(at url: StoreURL, model: ManagedObjectModel, authors: Bool = false) async throws {
        try await makeClosedStore(at: url, model: model) { container in
            let context = container.newContext()
            for (index, book) in Self.books.enumerated() {
                let object = try context.insertObject(entityName: "Book")
                object.setValue(.string(book.title), forKey: "title")
                object.setValue(.double(book.price), forKey: "price")
                if authors { object.setValue(.string("Author \(index + 1)"), forKey: "author") }
                for number in book.pages {
                    let page = try context.insertObject(entityName: "Page")
                    page.setValue(.integer(Int64(number)), forKey: "number")
                    page.setValue(.string("\(book.title), page \(number)"), forKey: "text")
                    page.setDestination(object, forKey: "book")
                }
            }
            try await context.save()
        }
    }

    /// The books and pages came across: entity `entity`, pages' to-one `toOne`.
    func expectBooks(at url: StoreURL, model: ManagedObjectModel, entity: String, toOne: String, authors: [AttributeValue]? = nil) async throws {
        try await F.expectFreshSchema(url, model)
        let container = try await F.open(url, model)
        let context = container.newContext()
        let books = try await context.fetch(
            FetchRequest(entityName: entity, sortDescriptors: [FetchRequest.SortDescriptor(key: "price"), FetchRequest.SortDescriptor(key: "title")])
        )
        #expect(titles(books) == ["The first book", "The third book", "The fourth book", "The second book"])
        #expect(books.map { $0.value(forKey: "price") } == [10.0, 10.0, 12.0, 15.0])
        if let authors {
            #expect(books.map { $0.value(forKey: "author") } == authors)
        }
        for book in books {
            let expected = Self.books.first { $0.title == book.value(forKey: "title").stringValue }?.pages ?? []
            let pages = try await book.destinations(forKey: "pages")
            #expect(pages.map { $0.value(forKey: "number").integerValue ?? -1 }.sorted() == expected.map(Int64.init))
            for page in pages {
                #expect(try await page.destination(forKey: toOne) === book)
                #expect(page.value(forKey: "text").stringValue?.hasPrefix(book.value(forKey: "title").stringValue ?? "?") == true)
            }
        }
        #expect(try await context.count(for: FetchRequest(entityName: "Page")) == 6)
        #expect(try await SchemaSnapshot(url).maxima.values.sorted() == [4, 6], "key counters carried")
    }

    @Test(arguments: TestEngine.allCases)
    func version1To2AddsTheAuthorColumnOnly(engine: TestEngine) async throws {
        let v = try versions()
        try await engine.withStoreURL { url in
            try await writeBooks(at: url, model: v[0])
            let migration = try await F.migrate(url, from: v[0], to: v[1])
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements == ["ALTER TABLE ZBOOK ADD COLUMN ZAUTHOR \(sql.type(.string))"])
            try await expectBooks(at: url, model: v[1], entity: "Book", toOne: "book", authors: [.null, .null, .null, .null])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func version2To3RenamesBookToPublication(engine: TestEngine) async throws {
        let v = try versions()
        try await engine.withStoreURL { url in
            try await writeBooks(at: url, model: v[1], authors: true)
            let metadataBefore = try await PersistentStore.metadata(at: url)
            let migration = try await F.migrate(url, from: v[1], to: v[2])
            // Renames, a renumbering (Book 1 → Publication 2, Page 2 → 1) and the renamed index.
            // On PostgreSQL the primary key's index follows the table too.
            let sql = SQLSpelling(migration, engine)
            let pkeyRename = engine == .postgres ? ["ALTER INDEX IF EXISTS ZBOOK_PKEY RENAME TO ZPUBLICATION_PKEY"] : []
            #expect(
                Set(sql.statements)
                    == Set(
                        [
                            "DROP INDEX ZPAGE_ZBOOK_INDEX",
                            "ALTER TABLE ZPAGE RENAME COLUMN ZBOOK TO ZPUBLICATION",
                            "ALTER TABLE ZBOOK RENAME TO ZPUBLICATION",
                            "UPDATE ZPUBLICATION SET Z_ENT = 2 WHERE Z_ENT = 1",
                            "UPDATE ZPAGE SET Z_ENT = 1 WHERE Z_ENT = 2",
                            "CREATE INDEX ZPAGE_ZPUBLICATION_INDEX ON ZPAGE (ZPUBLICATION)",
                        ] + pkeyRename
                    )
            )
            #expect(sql.statements.count == 6 + pkeyRename.count)
            try await expectBooks(
                at: url,
                model: v[2],
                entity: "Publication",
                toOne: "publication",
                authors: ["Author 1", "Author 3", "Author 4", "Author 2"]
            )
            let metadata = try await PersistentStore.metadata(at: url)
            #expect(metadata.storeUUID == metadataBefore.storeUUID)
            #expect(metadata.modelVersionName == "BookStore 3")
            let rows = try await SchemaSnapshot(url)
            #expect(rows.entities == ["1 Page 0", "2 Publication 0"])
            #expect(rows.maxima == ["Page": 6, "Publication": 4])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func version1To3AcrossTwoVersionsAtOnce(engine: TestEngine) async throws {
        let v = try versions()
        try await engine.withStoreURL { url in
            try await writeBooks(at: url, model: v[0])
            // The renaming identifiers of version 3 name version 1's Book and Page.book too.
            let migration = try await F.migrate(url, from: v[0], to: v[2])
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements.contains("ALTER TABLE ZBOOK ADD COLUMN ZAUTHOR \(sql.type(.string))"))
            #expect(sql.statements.contains("ALTER TABLE ZBOOK RENAME TO ZPUBLICATION"))
            try await expectBooks(at: url, model: v[2], entity: "Publication", toOne: "publication", authors: [.null, .null, .null, .null])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func version1To2To3StepByStep(engine: TestEngine) async throws {
        let v = try versions()
        try await engine.withStoreURL { url in
            try await writeBooks(at: url, model: v[0])
            try await F.migrate(url, from: v[0], to: v[1])
            try await F.migrate(url, from: v[1], to: v[2])
            try await expectBooks(at: url, model: v[2], entity: "Publication", toOne: "publication")
            // Version 5 adds the synopsis, also an inferred step.
            try await F.migrate(url, from: v[2], to: v[3])
            let migration = try await F.migrate(url, from: v[3], to: v[4])
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements == ["ALTER TABLE ZPUBLICATION ADD COLUMN ZSYNOPSIS \(sql.type(.string))"])
            try await expectBooks(at: url, model: v[4], entity: "Publication", toOne: "publication")
        }
    }
}
