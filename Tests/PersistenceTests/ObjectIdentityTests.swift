import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// An object and its ID outlive the save that wrote the object: a temporary ID kept
/// elsewhere still finds the row, and a context that forgets a saved batch keeps the objects
/// someone still holds, registered and usable.
@Suite("Object identity across saves")
struct ObjectIdentityTests {
    @Test(arguments: TestBackend.allCases)
    func aTemporaryIDFindsItsObjectAfterTheSave(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let book = try context.insertObject(entityName: "Book")
            book.setValue("Kept by its temporary ID", forKey: "title")
            let id = book.objectID
            #expect(id.isTemporaryID && id.primaryKey == nil)
            try await context.save()

            #expect(id.isTemporaryID, "the kept copy is still the temporary ID, as in Core Data")
            #expect(id != book.objectID)
            #expect(id.primaryKey != nil && id.primaryKey == book.objectID.primaryKey)
            #expect(context.registeredObject(for: id) === book)
            #expect(try await context.existingObject(with: id) === book)

            // Another context finds the row by it, and so does a predicate.
            let other = container.newContext()
            #expect(try await other.existingObject(with: id).value(forKey: "title") == "Kept by its temporary ID")
            let found = try await other.fetch(FetchRequest(entityName: "Book", predicate: try Predicate(format: "SELF == %@", .object(id))))
            #expect(found.map(\.objectID) == [book.objectID])

            // An ID whose object was never saved still says so.
            let unsaved = try context.insertObject(entityName: "Book").objectID
            context.reset()
            await #expect(throws: StoreError.self) { try await context.existingObject(with: unsaved) }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func forgettingASavedBatchKeepsTheObjectsHeldElsewhere(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            var held: [ManagedObject] = []
            weak var dropped: ManagedObject?
            do {
                for index in 0..<10 {
                    let author = try context.insertObject(entityName: "Author")
                    author.setValue(.string("Author \(index)"), forKey: "name")
                    if index % 4 == 0 { held.append(author) }
                    if index == 1 { dropped = author }
                }
                try await context.save()
            }
            context.forgetObjectsNotHeldElsewhere()

            #expect(context.state.withLock { $0.registered.count } == held.count, "only the three held authors stay registered")
            #expect(dropped == nil, "an author nobody holds is let go")
            #expect(held.allSatisfy { $0.managedObjectContext === context && !$0.isInserted })
            #expect(held.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })

            // A held author is still a live object of its context: changing it and adding to
            // its relationships are saved.
            let book = try context.insertObject(entityName: "Book")
            book.setValue("Written after the batch", forKey: "title")
            held[1].addDestination(book, forKey: "books")
            held[1].setValue("Author 4, renamed", forKey: "name")
            #expect(context.hasChanges)
            try await context.save()

            let check = container.newContext()
            let renamed = try await check.existingObject(with: held[1].objectID)
            #expect(renamed.value(forKey: "name") == "Author 4, renamed")
            #expect(try await renamed.destinations(forKey: "books").map { $0.value(forKey: "title") } == ["Written after the batch"])
            #expect(try await check.count(for: FetchRequest(entityName: "Author")) == 10)
        }
    }
}
