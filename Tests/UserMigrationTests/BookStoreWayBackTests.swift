import BookStore
import Foundation
import Logging
import Persistence
import PersistenceTesting
import Testing

/// The way back, as an app's test suite would test rolling a release back: a BookStore 5
/// store taken to earlier versions through the public API alone, on both engines. The
/// values expected are worked out here from the rows the tests write.
@Suite struct BookStoreWayBackTests {
    let logger = Logger(label: "user-migration-tests") { _ in SwiftLogNoOpLogHandler() }

    /// Publications at BookStore 5: a NULL author and a NULL synopsis, non-ASCII, a one-word
    /// author, a last name of several words, cents.
    static let publications: [(title: String, price: Double, first: String?, last: String?, synopsis: String?)] = [
        ("Dune", 9.5, "Frank", "Herbert", "Spice, sand and a desert planet."),
        ("La Gaviota — édition révisée", 18.0, "Cecilia", "Böhl de Faber", "Une mouette, une chanteuse."),
        ("Ωmega", 12.25, "Søren", nil, nil),
        ("Untitled draft", 0.75, nil, nil, "Notes."),
    ]

    static func rows() -> [FixtureRow] {
        var rows: [FixtureRow] = []
        for (index, publication) in publications.enumerated() {
            rows.append(
                FixtureRow(
                    "Publication",
                    label: "publication \(index)",
                    [
                        "title": .string(publication.title), "price": .double(publication.price),
                        "firstName": publication.first.map(AttributeValue.string) ?? .null,
                        "lastName": publication.last.map(AttributeValue.string) ?? .null,
                        "synopsis": publication.synopsis.map(AttributeValue.string) ?? .null,
                    ]
                )
            )
            for number in 1...3 {
                rows.append(
                    FixtureRow(
                        "Page",
                        ["number": .integer(Int64(number)), "text": .string("page \(number) of \(publication.title)")],
                        relationships: ["publication": ["publication \(index)"]]
                    )
                )
            }
        }
        return rows
    }

    func kit(_ engine: TestEngine, mappingModels: (BookStoreModels) -> [MappingModel] = \.mappingModels) throws -> MigrationTestKit {
        let models = try BookStoreModels.load()
        let chain = try MigrationChain(
            BookStoreVersion.self,
            models: models.versions,
            mappingModels: mappingModels(models),
            policies: BookStoreMigration.policies
        )
        return MigrationTestKit(chain: chain, engine: engine, logger: logger)
    }

    static func sorted(_ values: [String?]) -> [AttributeValue] {
        values.map { $0.map(AttributeValue.string) ?? .null }.sorted { "\($0)" < "\($1)" }
    }

    /// Back to BookStore 4 drops the synopses: refused, counting them, until the loss is
    /// accepted; then every other value is there, laid out as BookStore 4 creates it.
    @Test(arguments: TestEngine.allCases)
    func backToFourDropsTheSynopsesOnlyWhenAccepted(engine: TestEngine) async throws {
        let kit = try kit(engine)
        try await kit.withStore(at: "BookStore 5", rows: Self.rows()) { url in
            let before = try await StoreSnapshot(url)
            let withSynopsis = Self.publications.filter { $0.synopsis != nil }.count
            let error = await #expect(throws: MigrationError.self) { try await kit.migrate(url, to: "BookStore 4") }
            #expect(error?.code == .dataLossNotAccepted)
            #expect(error?.message.contains("Publication.synopsis is not carried") == true, "\(String(describing: error))")
            #expect(error?.message.contains("— \(withSynopsis) rows have a value") == true, "\(String(describing: error))")
            try await expectUnchanged(url, since: before)

            let plan = try await kit.migrate(url, to: "BookStore 4", acceptingDataLoss: true)
            #expect(plan.goesBack && plan.steps.map(\.destination.name) == ["BookStore 4"])
            try await kit.expectLayoutMatches(url, version: "BookStore 4")
            #expect(try await kit.values("title", of: "Publication", in: url) == Self.sorted(Self.publications.map(\.title)))
            #expect(try await kit.values("firstName", of: "Publication", in: url) == Self.sorted(Self.publications.map(\.first)))
            #expect(try await kit.values("lastName", of: "Publication", in: url) == Self.sorted(Self.publications.map(\.last)))
            #expect(
                try await kit.values("price", of: "Publication", in: url)
                    == Self.publications.map { AttributeValue.double($0.price) }.sorted { "\($0)" < "\($1)" }
            )
            #expect(try await kit.values("text", of: "Page", in: url).count == Self.publications.count * 3)
            let rows = Self.publications.map { "\($0.title) | \($0.first ?? "nil") | \($0.last ?? "nil") | \($0.price)" }.sorted()
            #expect(try await Self.rows(["title", "firstName", "lastName", "price"], in: url, version: "BookStore 4") == rows)
            #expect(try await Self.pagesNamingTheirBook(in: url, version: "BookStore 4", link: "publication") == Self.publications.count * 3)
        }
    }

    /// Back to BookStore 3 by the mapping model BookStore ships (`Model4To3`): the names are
    /// joined into the author each had; forward again to 5, every row is there as before.
    @Test(arguments: TestEngine.allCases)
    func backToThreeJoinsTheNamesAndForwardAgainKeepsEveryRow(engine: TestEngine) async throws {
        let kit = try kit(engine)
        try await kit.withStore(at: "BookStore 5", rows: Self.rows()) { url in
            let titles = try await kit.values("title", of: "Publication", in: url)
            let texts = try await kit.values("text", of: "Page", in: url)
            let numbers = try await kit.values("number", of: "Page", in: url)
            let firstNames = try await kit.values("firstName", of: "Publication", in: url)
            let lastNames = try await kit.values("lastName", of: "Publication", in: url)
            let prices = try await kit.values("price", of: "Publication", in: url)

            let back = try await kit.migrate(url, to: "BookStore 3", acceptingDataLoss: true)
            #expect(back.steps.map { "\($0.source.name) → \($0.destination.name)" } == ["BookStore 5 → BookStore 4", "BookStore 4 → BookStore 3"])
            #expect(back.steps[1].mappingModels.map(\.name) == ["Model4To3"])
            try await kit.expectLayoutMatches(url, version: "BookStore 3")
            let joined = Self.publications.map { publication -> String? in
                switch (publication.first, publication.last) {
                case let (first?, last?): "\(first) \(last)"
                case let (first?, nil): first
                case let (nil, last?): last
                case (nil, nil): nil
                }
            }
            #expect(try await kit.values("author", of: "Publication", in: url) == Self.sorted(joined))
            // Row by row: each title with its own author and price, each page with its own publication.
            let expectedRows = zip(Self.publications, joined).map { "\($0.title) | \($1 ?? "nil") | \($0.price)" }.sorted()
            #expect(try await Self.rows(["title", "author", "price"], in: url, version: "BookStore 3") == expectedRows)
            #expect(try await Self.pagesNamingTheirBook(in: url, version: "BookStore 3", link: "publication") == Self.publications.count * 3)
            #expect(try await kit.values("title", of: "Publication", in: url) == titles)
            #expect(try await kit.values("text", of: "Page", in: url) == texts)

            try await kit.migrate(url)
            try await kit.expectLayoutMatches(url, version: "BookStore 5")
            #expect(try await kit.values("title", of: "Publication", in: url) == titles)
            #expect(try await kit.values("firstName", of: "Publication", in: url) == firstNames)
            #expect(try await kit.values("lastName", of: "Publication", in: url) == lastNames)
            #expect(try await kit.values("price", of: "Publication", in: url) == prices)
            #expect(try await kit.values("text", of: "Page", in: url) == texts)
            #expect(try await kit.values("number", of: "Page", in: url) == numbers)
            // The synopses were dropped on the way back; the step forward fills them from the titles.
            #expect(try await kit.values("synopsis", of: "Publication", in: url) == titles)
            let forwardRows = Self.publications.map { "\($0.title) | \($0.first ?? "nil") | \($0.last ?? "nil") | \($0.price)" }.sorted()
            #expect(try await Self.rows(["title", "firstName", "lastName", "price"], in: url, version: "BookStore 5") == forwardRows)
            #expect(try await Self.pagesNamingTheirBook(in: url, version: "BookStore 5", link: "publication") == Self.publications.count * 3)
        }
    }

    /// Each publication's values of `keys`, joined by ` | ` (`nil` for NULL), sorted.
    static func rows(_ keys: [String], in url: StoreURL, version: String) async throws -> [String] {
        let model = try #require(try BookStoreModels.load().versions.version(named: version))
        let logger = Logger(label: "user-migration-tests") { _ in SwiftLogNoOpLogHandler() }
        let container = try await PersistentContainer.open(model: model, store: url, logger: logger)
        let context = container.newContext()
        let rows = try await context.fetch(FetchRequest(entityName: "Publication")).map { publication in
            keys.map { key -> String in
                switch publication.value(forKey: key) {
                case .null: "nil"
                case .string(let text): text
                case .double(let number): "\(number)"
                case let other: "\(other)"
                }
            }
            .joined(separator: " | ")
        }
        await container.store.close()
        return rows.sorted()
    }

    /// Without the mapping model back over the author split, the way to 3 is refused before
    /// anything is written, naming that step and what it did; 4 is still reachable.
    @Test(arguments: TestEngine.allCases)
    func withoutAMappingBackTheAuthorSplitIsRefused(engine: TestEngine) async throws {
        let kit = try kit(engine) { models in models.mappingModels.filter { $0.name != "Model4To3" } }
        try await kit.withStore(at: "BookStore 5", rows: Self.rows()) { url in
            let before = try await StoreSnapshot(url)
            let error = await #expect(throws: MigrationError.self) { try await kit.migrate(url, to: "BookStore 3", acceptingDataLoss: true) }
            #expect(error?.code == .irreversibleStep)
            #expect(
                error?.message.contains(
                    "the step back 'BookStore 4' → 'BookStore 3' has no inverse to infer: in the step 'BookStore 3' → 'BookStore 4', the policy PublicationToPublicationMigrationPolicy carries Publication.author"
                ) == true,
                "\(String(describing: error))"
            )
            try await expectUnchanged(url, since: before)
            try await kit.migrate(url, to: "BookStore 4", acceptingDataLoss: true)
            try await kit.expectLayoutMatches(url, version: "BookStore 4")
        }
    }

    /// Every version back from 5: the renames of 3 undone (`Publication` is `Book` again, its
    /// pages' `publication` is `book`), the author dropped on the way to 1; titles and pages
    /// every time.
    @Test(arguments: TestEngine.allCases)
    func everyEarlierVersionIsReachedBack(engine: TestEngine) async throws {
        let kit = try kit(engine)
        for (target, entity) in [("BookStore 2", "Book"), ("BookStore", "Book")] {
            try await kit.withStore(at: "BookStore 5", rows: Self.rows()) { url in
                try await kit.migrate(url, to: target, acceptingDataLoss: true)
                try await kit.expectLayoutMatches(url, version: target)
                #expect(try await kit.values("title", of: entity, in: url) == Self.sorted(Self.publications.map(\.title)), "back to \(target)")
                #expect(try await kit.values("text", of: "Page", in: url).count == Self.publications.count * 3, "back to \(target)")
                // Each page still belongs to its book: its text names the book's title.
                #expect(
                    try await Self.pagesNamingTheirBook(in: url, version: target, link: "book") == Self.publications.count * 3,
                    "back to \(target)"
                )
                try await kit.migrate(url)
                #expect(
                    try await Self.pagesNamingTheirBook(in: url, version: "BookStore 5", link: "publication") == Self.publications.count * 3,
                    "back to \(target)"
                )
            }
        }
    }

    /// How many pages of the store at `url` (at `version`) link to the book their text names.
    static func pagesNamingTheirBook(in url: StoreURL, version: String, link: String) async throws -> Int {
        let models = try BookStoreModels.load()
        let model = try #require(models.versions.version(named: version))
        let logger = Logger(label: "user-migration-tests") { _ in SwiftLogNoOpLogHandler() }
        let container = try await PersistentContainer.open(model: model, store: url, logger: logger)
        let context = container.newContext()
        var linked = 0
        for page in try await context.fetch(FetchRequest(entityName: "Page")) {
            guard case .string(let text) = page.value(forKey: "text"), let book = try await page.destination(forKey: link),
                case .string(let title) = book.value(forKey: "title")
            else { continue }
            if text.hasSuffix(" of \(title)") { linked += 1 }
        }
        await container.store.close()
        return linked
    }
}
