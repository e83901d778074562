import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A store opened with ``PersistentStore/Options/defersIndexes`` (a migration's workspace)
/// is created without its secondary indexes, and builds them before anything looks rows up
/// by them.
@Suite("Deferred indexes")
struct DeferredIndexTests {
    /// A book with two pages, saved; the store's indexes afterwards.
    func fill(_ store: PersistentStore) async throws -> ManagedObject {
        let context = ManagedObjectContext(store: store, logger: testLogger)
        let book = try context.insertObject(entityName: "Book")
        book.setValue("A", forKey: "title")
        for number in 1...2 {
            let page = try context.insertObject(entityName: "Page")
            page.setValue(.integer(Int64(number)), forKey: "number")
            page.setDestination(book, forKey: "book")
        }
        try await context.save()
        return book
    }

    /// Opens a new store of `engine` with the workspace options, runs `body`, closes it.
    func withWorkspaceStore(_ engine: TestEngine, model: ManagedObjectModel, _ body: (PersistentStore, StoreURL) async throws -> Void) async throws {
        try await engine.withStoreURL { url in
            let store = try await PersistentStore.open(url, model: model, options: .workspace, logger: testLogger)
            do {
                try await body(store, url)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aFetchBuildsTheIndexesAWorkspaceStoreDeferred(engine: TestEngine) async throws {
        let model = try LibraryModel.make()
        try await withWorkspaceStore(engine, model: model) { store, url in
            _ = try await fill(store)
            #expect(try await storeIndexNames(url).isEmpty, "bulk writes into a workspace store keep no index up to date")
            let context = ManagedObjectContext(store: store, logger: testLogger)
            let pages = try await context.fetch(FetchRequest(entityName: "Page", predicate: try Predicate(format: "book.title == %@", "A")))
            #expect(pages.count == 2)
            try await expectEveryIndex(url, of: model)
            try await store.buildDeferredIndexes()
            try await expectEveryIndex(url, of: model)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aToManyFaultBuildsThemToo(engine: TestEngine) async throws {
        let model = try LibraryModel.make()
        try await withWorkspaceStore(engine, model: model) { store, url in
            let book = try await fill(store)
            let key = try #require(book.objectID.primaryKey)
            let context = ManagedObjectContext(store: store, logger: testLogger)
            let fresh = try await context.existingObject(with: try context.objectID(entityName: "Book", primaryKey: key))
            #expect(try await storeIndexNames(url).isEmpty, "a look-up by primary key needs no secondary index")
            #expect(try await fresh.destinations(forKey: "pages").count == 2)
            try await expectEveryIndex(url, of: model)
        }
    }

    /// A store opened as usual has its indexes from the start.
    @Test(arguments: TestEngine.allCases)
    func anOrdinaryStoreIsCreatedWithItsIndexes(engine: TestEngine) async throws {
        let model = try LibraryModel.make()
        try await engine.withStoreURL { url in
            let store = try await PersistentStore.open(url, model: model, options: .createIfMissing, logger: testLogger)
            await store.close()
            try await expectEveryIndex(url, of: model)
        }
    }
}
