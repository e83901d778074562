import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Prefetched to-many destinations answer as the store would: the same objects in the
/// same order, the context's unsaved changes on top, and nothing stale after a save.
@Suite("Prefetching to-many relationships")
struct PrefetchTests {
    @Test(arguments: TestBackend.allCases)
    func prefetchedDestinationsMatchTheStoreAndFollowChanges(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let writer = container.newContext()
            var books: [ManagedObject] = []
            for number in 0..<3 {
                let book = try writer.insertObject(entityName: "Book")
                book.setValue(.string("Book \(number)"), forKey: "title")
                for _ in 0..<number {
                    try writer.insertObject(entityName: "Page").setDestination(book, forKey: "book")
                }
                books.append(book)
            }
            try await writer.save()

            let fresh = container.newContext()
            let expected = try await books.asyncMap {
                try await fresh.existingObject(with: $0.objectID).destinations(forKey: "pages").map(\.objectID)
            }
            let context = container.newContext()
            var loaded: [ManagedObject] = []
            for book in books { loaded.append(try await context.existingObject(with: book.objectID)) }
            let prefetched = try await context.prefetchDestinations(of: loaded, key: "pages")
            #expect(prefetched.count == 3)
            #expect(try await loaded.asyncMap { try await $0.destinations(forKey: "pages").map(\.objectID) } == expected)

            // An unsaved move shows on top of what was prefetched.
            let moved = try #require(try await loaded[2].destinations(forKey: "pages").first)
            moved.setDestination(loaded[0], forKey: "book")
            #expect(try await loaded[0].destinations(forKey: "pages").map(\.objectID) == [moved.objectID])
            #expect(try await loaded[2].destinations(forKey: "pages").count == 1)

            // Another context's save is not seen until this context saves (the prefetch is a
            // snapshot); after the save the store is read again.
            let other = container.newContext()
            let owner = try await other.existingObject(with: books[1].objectID)
            try other.insertObject(entityName: "Page").setDestination(owner, forKey: "book")
            try await other.save()
            #expect(try await loaded[1].destinations(forKey: "pages").count == 1)
            try await context.save()
            #expect(try await loaded[1].destinations(forKey: "pages").count == 2)
            #expect(try await loaded[0].destinations(forKey: "pages").map(\.objectID) == [moved.objectID])
        }
    }
}
