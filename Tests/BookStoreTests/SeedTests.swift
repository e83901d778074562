import BookStoreTesting
import Foundation
import Testing
@testable import BookStore
@testable import Persistence

@Suite("Seeding every model version")
struct SeedTests {
    static let versions = Array(1...5)

    @Test(arguments: Backend.allCases, versions)
    func seededStoreHoldsWhatTheVersionCanHold(backend: Backend, version: Int) async throws {
        let models = try loadModels()
        try await withStoreURL(backend) { url in
            let model = try models.model(version: version)
            let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: quietLogger)
            let summary = try await Seeder(catalogue: try loadCatalogue(), logger: quietLogger).seed(container, version: version, generatedCount: 3)
            #expect(summary.books == 7)
            #expect(summary.pages == 12 + 6)

            let shape = BookStoreVersionShape(version: version)
            let context = container.newContext()
            let books = try await context.fetch(FetchRequest(entityName: shape.bookEntity, sortDescriptors: [FetchRequest.SortDescriptor(key: "title")]))
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
                #expect(generated.value(forKey: "author") == .string(Seeder.generatedBook(1).author))
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

    @Test func aPostgreSQLStoreIsSeededOnceAndItsStatusRead() async throws {
        try await withStoreURL(.postgres) { url in
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

    @Test(arguments: versions)
    func eachVersionsStoreIsCompatibleWithExactlyItsOwnModel(version: Int) async throws {
        let models = try loadModels()
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = sqliteStoreURL(in: directory)
        let administration = StoreAdministration(models: models, logger: quietLogger)
        _ = try await administration.seed(url, version: version, count: 0, catalogue: try loadCatalogue())
        let status = try await administration.status(of: url)
        #expect(status.storeModel.name == (version == 1 ? "BookStore" : "BookStore \(version)"))
        #expect(status.isCompatible == (version == 5))
        let compatible = models.versions.versions.filter { $0.isCompatible(with: status.metadata) }.map(\.name)
        #expect(compatible == [status.storeModel.name])
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
