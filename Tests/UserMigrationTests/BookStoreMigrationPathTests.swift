import BookStore
import Foundation
import Logging
import Persistence
import PersistenceTesting
import Testing

/// BookStore's migrations tested as an app's own test suite tests its migrations: through
/// the public API of `PersistenceTesting` alone (no `@testable`), on both engines. Every
/// path of the chain, BookStore (1) to 4 each to BookStore 5, from rows written at the
/// version the path starts from; the values expected are worked out here from those rows.
@Suite struct BookStoreMigrationPathTests {
    let logger = Logger(label: "user-migration-tests") { _ in SwiftLogNoOpLogHandler() }

    /// The books every store starts with: a NULL author, non-ASCII, a one-word author, cents
    /// (the price is required).
    static let books: [(title: String, price: Double, author: String?)] = [
        ("Dune", 9.5, "Frank Herbert"),
        ("La Gaviota — édition révisée", 18.0, "Cecilia Böhl de Faber"),
        ("Ωmega", 12.25, "Søren"),
        ("Untitled draft", 0.75, nil),
    ]

    @Test(arguments: TestEngine.allCases)
    func everyVersionMigratesToTheCurrentOne(engine: TestEngine) async throws {
        let models = try BookStoreModels.load()
        let kit = MigrationTestKit(chain: try BookStoreMigration.chain(models: models), engine: engine, logger: logger)
        var paths: [String] = []
        try await kit.forEveryPath(rows: Self.rows(at:)) { url, from in
            paths.append(from.name)
            let titles = try await kit.values("title", of: "Publication", in: url)
            #expect(titles == Self.books.map { AttributeValue.string($0.title) }.sorted { "\($0)" < "\($1)" }, "from \(from.name)")
            // The synopsis arrives as the title; the author splits at its first space.
            #expect(try await kit.values("synopsis", of: "Publication", in: url) == titles, "from \(from.name)")
            let hadAuthors = from.entity(named: "Book")?.attributes.contains { $0.name == "author" } ?? true
            let firstNames = try await kit.values("firstName", of: "Publication", in: url)
            let lastNames = try await kit.values("lastName", of: "Publication", in: url)
            let written = Self.books.map { hadAuthors ? $0.author : nil }
            #expect(firstNames == Self.sorted(written.map { $0.map { String($0.split(separator: " ", maxSplits: 1)[0]) } }), "from \(from.name)")
            #expect(
                lastNames == Self.sorted(written.map { $0?.split(separator: " ", maxSplits: 1).dropFirst().first.map(String.init) }),
                "from \(from.name)"
            )
            #expect(try await kit.values("number", of: "Page", in: url).count == Self.books.count * 2, "from \(from.name)")
        }
        #expect(paths == ["BookStore", "BookStore 2", "BookStore 3", "BookStore 4"])
    }

    /// The frozen stores of versions 1–4 (Tests/Fixtures/BookStore, written once and
    /// committed), copied and migrated to BookStore 5 on each engine: every title and page
    /// the fixture held is there after, laid out as BookStore 5 creates it.
    @Test(arguments: TestEngine.allCases)
    func everyFrozenFixtureMigratesToTheCurrentVersion(engine: TestEngine) async throws {
        let models = try BookStoreModels.load()
        let kit = MigrationTestKit(chain: try BookStoreMigration.chain(models: models), engine: engine, logger: logger)
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/BookStore")
        for version in 1...4 {
            try await kit.withCopy(ofFixture: folder.appendingPathComponent("BookStore\(version).sqlite")) { url in
                let entity = version < 3 ? "Book" : "Publication"
                let titles = try await kit.values("title", of: entity, in: url)
                let pages = try await kit.values("number", of: "Page", in: url)
                // What Tests/Fixtures/BookStore/README.md says each frozen store holds.
                #expect(titles.count == 4 && Set(titles).count == 4, "the fixture of version \(version): \(titles)")
                #expect(pages.count == 12 && !pages.contains(.null), "the fixture of version \(version): \(pages)")
                try await kit.migrate(url)
                try await kit.expectLayoutMatches(url, version: models.current.name)
                #expect(try await kit.values("title", of: "Publication", in: url) == titles, "from version \(version)")
                #expect(try await kit.values("number", of: "Page", in: url) == pages, "from version \(version)")
            }
        }
    }

    /// The books, each with two pages, as `model` has them: `Book` until BookStore 3 names
    /// it `Publication`, one `author` until BookStore 4 splits it.
    static func rows(at model: ManagedObjectModel) -> [FixtureRow] {
        let entity = model.entity(named: "Book") == nil ? "Publication" : "Book"
        let attributes = Set(model.entity(named: entity)?.attributes.map(\.name) ?? [])
        let pagesLink = entity == "Book" ? "book" : "publication"
        var rows: [FixtureRow] = []
        for (index, book) in books.enumerated() {
            var values: [String: AttributeValue] = ["title": .string(book.title), "price": .double(book.price)]
            if attributes.contains("author") { values["author"] = book.author.map(AttributeValue.string) ?? .null }
            if attributes.contains("firstName"), let author = book.author {
                let parts = author.split(separator: " ", maxSplits: 1).map(String.init)
                values["firstName"] = .string(parts[0])
                values["lastName"] = parts.count > 1 ? .string(parts[1]) : .null
            }
            rows.append(FixtureRow(entity, label: "book \(index)", values))
            for number in 1...2 {
                rows.append(
                    FixtureRow(
                        "Page",
                        ["number": .integer(Int64(number)), "text": .string("page \(number) of \(book.title)")],
                        relationships: [pagesLink: ["book \(index)"]]
                    )
                )
            }
        }
        return rows
    }

    static func sorted(_ strings: [String?]) -> [AttributeValue] {
        strings.map { $0.map(AttributeValue.string) ?? .null }.sorted { "\($0)" < "\($1)" }
    }
}
