import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `fetchObjectIDs` (Core Data's `managedObjectIDResultType`) and `existingObjects(with:)`:
/// the IDs of a window, then its objects in batches, as a list too long to hold at once is read.
@Suite("Object ID fetches")
struct ObjectIDFetchTests {
    @Test(arguments: TestBackend.allCases, FetchPredicateTests.Seeding.allCases)
    func theIDsOfAWindowAreThoseOfItsObjectsInOrder(backend: TestBackend, seeding: FetchPredicateTests.Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = try await FetchPredicateTests.seed(container, seeding)
            let byPrice = [FetchRequest.SortDescriptor(key: "price", ascending: false), FetchRequest.SortDescriptor(key: "title")]
            let requests = [
                FetchRequest(entityName: "Book", sortDescriptors: byPrice),
                FetchRequest(entityName: "Book", sortDescriptors: byPrice, fetchLimit: 7, fetchOffset: 5),
                FetchRequest(
                    entityName: "Book",
                    predicate: try Predicate(format: "price < 20"),
                    sortDescriptors: [.init(key: "title", caseInsensitive: true)]
                ),
                FetchRequest(
                    entityName: "Page",
                    predicate: try Predicate(format: "book.price > 10"),
                    sortDescriptors: [.init(key: "number")],
                    fetchLimit: 9
                ),
                FetchRequest(entityName: "Book", fetchOffset: 1_000),
            ]
            for request in requests {
                let objects = try await context.fetch(request)
                let ids = try await context.fetchObjectIDs(request)
                #expect(ids == objects.map(\.objectID), "\(request)")
                // In batches, in the same context: the same instances, unsaved changes and all.
                var batched: [ManagedObject] = []
                for start in stride(from: 0, to: ids.count, by: 4) {
                    batched += try await context.existingObjects(with: Array(ids[start..<min(start + 4, ids.count)]))
                }
                #expect(batched.count == objects.count && zip(batched, objects).allSatisfy { $0 === $1 }, "\(request)")
            }
            #expect(try await context.fetchObjectIDs(FetchRequest(entityName: "Book", fetchLimit: 0)).isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aRowDeletedSinceItsIDWasReadIsLeftOut(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            _ = try await FetchPredicateTests.seed(container)
            let request = FetchRequest(entityName: "Book", sortDescriptors: [.init(key: "title")], fetchLimit: 6)
            let ids = try await container.newContext().fetchObjectIDs(request)
            let before = titles(try await container.newContext().fetch(request))
            #expect(ids.count == 6 && before.count == 6)

            let deleting = container.newContext()
            deleting.delete(try await deleting.existingObject(with: ids[2]))
            try await deleting.save()

            let loaded = try await container.newContext().existingObjects(with: ids)
            #expect(loaded.map(\.objectID) == ids.filter { $0 != ids[2] })
            #expect(titles(loaded) == before.enumerated().filter { $0.offset != 2 }.map(\.element))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func theIDsOfAHierarchyNameEachRowsOwnEntity(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = container.newContext()
            for (entity, name) in [("Tool", "Hammer"), ("Gadget", "Radio"), ("Tool", "Saw")] {
                try context.insertObject(entityName: entity).setValue(.string(name), forKey: "name")
            }
            try await context.save()
            let fresh = container.newContext()
            let ids = try await fresh.fetchObjectIDs(FetchRequest(entityName: "Item", sortDescriptors: [.init(key: "name")]))
            #expect(ids.map(\.entityName) == ["Tool", "Gadget", "Tool"])
            #expect(titles(try await fresh.existingObjects(with: ids), key: "name") == ["Hammer", "Radio", "Saw"])
            #expect(try await fresh.fetchObjectIDs(FetchRequest(entityName: "Tool", sortDescriptors: [.init(key: "name")])).count == 2)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func anIDTakenBeforeItsObjectWasSavedFindsTheSavedRow(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = container.newContext()
            let book = try context.insertObject(entityName: "Book")
            book.setValue("Saved later", forKey: "title")
            let temporary = book.objectID
            #expect(try await context.existingObjects(with: [temporary]).first === book)
            try await context.save()
            #expect(try await context.existingObjects(with: [temporary]).first === book)
            #expect(titles(try await container.newContext().existingObjects(with: [temporary])) == ["Saved later"])
        }
    }
}
