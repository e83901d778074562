import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

@Suite struct StoreSmokeTests {
    @Test(arguments: TestBackend.allCases)
    func insertFetchRoundTrip(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let book = try context.insertObject(entityName: "Book")
            book.setValue("The first book", forKey: "title")
            book.setValue(10.0, forKey: "price")
            let page = try context.insertObject(entityName: "Page")
            page.setValue(1, forKey: "number")
            page.setDestination(book, forKey: "book")
            try await context.save()
            #expect(book.objectID.primaryKey == 1)

            let other = container.newContext()
            let books = try await other.fetch(FetchRequest(entityName: "Book"))
            #expect(books.count == 1)
            #expect(books.first?.value(forKey: "title") == "The first book")
            let pages = try await #require(books.first).destinations(forKey: "pages")
            #expect(pages.map { $0.value(forKey: "number") } == [1])
        }
    }
}
