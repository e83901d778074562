import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@testable import Persistence

@Suite("Seeding every model version")
struct SeedTests {
    static let versions = Array(1...5)

    @Test(arguments: TestBackend.allCases, versions)
    func seededStoreHoldsWhatTheVersionCanHold(backend: TestBackend, version: Int) async throws {
        let models = try loadModels()
        try await backend.withStoreURL { url in
            let model = try models.model(version: version)
            let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: quietLogger)
            let summary = try await Seeder(catalogue: try loadCatalogue(), logger: quietLogger).seed(container, version: version, generatedCount: 3)
            #expect(summary.books == 7)
            #expect(summary.pages == 12 + 6)

            let shape = BookStoreVersionShape(version: version)
            let context = container.newContext()
            let books = try await context.fetch(
                FetchRequest(entityName: shape.bookEntity, sortDescriptors: [FetchRequest.SortDescriptor(key: "title")])
            )
            #expect(books.count == 7)
            let second = try #require(books.first { $0.value(forKey: "title") == "The second book" })
            let pages = try await second.destinations(forKey: "pages")
            #expect(pages.count == 3)
            #expect(try await pages[0].destination(forKey: shape.pageToBook) === second)

            switch version {
            case 1:
                #expect(second.value(forKey: "price") == .double(15))
                #expect(second.validateKey("author") == false)
            case 2:
                #expect(second.value(forKey: "price") == .double(15))
                #expect(second.value(forKey: "author") == .null)
                let generated = try #require(books.first { $0.value(forKey: "title") == "Generated book 1" })
                #expect(generated.value(forKey: "author") == Seeder.generatedBook(1).author.map(AttributeValue.string))
            case 3:
                #expect(second.value(forKey: "price") == .double(20))
                #expect(second.value(forKey: "author") == "John Doe")
            default:
                #expect(second.value(forKey: "price") == .double(20))
                #expect(second.value(forKey: "firstName") == "John")
                #expect(second.value(forKey: "lastName") == "Doe")
                #expect(second.value(forKey: "synopsis") == (version == 5 ? "The second book" : .null))
            }
            await container.store.close()
        }
    }

    /// Not in memory: a second seed of a store that lives only in this process's memory
    /// is no second process's concern.
    @Test(arguments: [TestBackend.sqlite, .postgres])
    func aStoreIsSeededOnceAndItsStatusRead(backend: TestBackend) async throws {
        try await backend.withStoreURL { url in
            let administration = StoreAdministration(models: try loadModels(), logger: quietLogger)
            let summary = try await administration.seed(url, version: 2, count: 0, catalogue: try loadCatalogue())
            #expect(summary.books == 4)
            let status = try await administration.status(of: url)
            #expect(status.storeModel.name == "BookStore 2")
            #expect(!status.isCompatible)
            let again = await #expect(throws: BookStoreError.self) {
                try await administration.seed(url, version: 2, count: 0, catalogue: try loadCatalogue())
            }
            #expect(again?.message.contains("already exists") == true)
        }
    }

    @Test(arguments: [TestBackend.sqlite, .postgres], versions)
    func eachVersionsStoreIsCompatibleWithExactlyItsOwnModel(backend: TestBackend, version: Int) async throws {
        try await backend.withStoreURL { url in
            let models = try loadModels()
            let administration = StoreAdministration(models: models, logger: quietLogger)
            _ = try await administration.seed(url, version: version, count: 0, catalogue: try loadCatalogue())
            let status = try await administration.status(of: url)
            #expect(status.storeModel.name == (version == 1 ? "BookStore" : "BookStore \(version)"))
            #expect(status.isCompatible == (version == 5))
            let compatible = models.versions.versions.filter { $0.isCompatible(with: status.metadata) }.map(\.name)
            #expect(compatible == [status.storeModel.name])
        }
    }

    /// The benchmark writes generated books by SQL on the server; they are the seeder's,
    /// value for value, shaped like users' data. (Not in memory: the benchmark writes a
    /// file's or a server's store.)
    @Test(arguments: [TestBackend.sqlite, .postgres])
    func generatedBooksBySQLAreTheSeedersBooks(backend: TestBackend) async throws {
        let model = try loadModels().model(version: 2)
        let count = 140
        func books(_ url: StoreURL) async throws -> [[DatabaseValue]] {
            try await PersistentStore.inspect(url) { connection in
                try connection.rows(
                    """
                    SELECT b.ZTITLE, b.ZPRICE, b.ZAUTHOR, p.ZNUMBER, p.ZTEXT FROM ZBOOK b JOIN ZPAGE p ON p.ZBOOK = b.Z_PK                     WHERE b.ZTITLE LIKE 'Generated book %' ORDER BY b.ZTITLE, p.ZNUMBER
                    """
                ).map(\.values)
            }
        }
        var seeded: [[DatabaseValue]] = []
        var written: [[DatabaseValue]] = []
        try await backend.withStoreURL { url in
            let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: quietLogger)
            _ = try await Seeder(catalogue: try loadCatalogue(), logger: quietLogger).seed(container, version: 2, generatedCount: count)
            await container.store.close()
            seeded = try await books(url)
        }
        try await backend.withStoreURL { url in
            let store = try await PersistentStore.open(url, model: model, options: .createIfMissing, logger: quietLogger)
            let statements = GeneratedBooks.insertStatements(count: count, schema: store.schema)
            try await store.database.write { connection in
                for statement in statements { try connection.execute(rawSQL: statement) }
            }
            await store.close()
            written = try await books(url)
        }
        #expect(seeded.count == 2 * count)
        #expect(written == seeded)
        // Users' data: cents, non-ASCII and one-word authors, books without one.
        let authors = seeded.compactMap { $0[2].text }
        #expect(seeded.contains { $0[2].isNull })
        #expect(authors.contains { $0.unicodeScalars.contains { !$0.isASCII } })
        #expect(authors.contains { !$0.contains(" ") })
        #expect(seeded.contains { ($0[1].double ?? 0).rounded() != $0[1].double })
    }

    @Test func generatedBooksAreDeterministic() {
        #expect(Seeder.generatedBook(42).title == "Generated book 42")
        #expect(Seeder.generatedBook(42).price == Seeder.generatedBook(42).price)
        #expect((0...1000).contains(Seeder.generatedBook(12_345).price))
        #expect(BookStoreVersionShape.splitName("Jane Doe") == ("Jane", "Doe"))
        #expect(BookStoreVersionShape.splitName("Plato") == ("Plato", nil))
        #expect(BookStoreVersionShape.splitName("Mary Ann Evans") == ("Mary", "Ann Evans"))
    }
}
