import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Relationships keep their inverses in step, in the context before a save and in the
/// store after it.
@Suite("Relationships")
struct RelationshipTests {
    func named(_ context: ManagedObjectContext, _ entity: String, _ key: String, _ value: String) throws -> ManagedObject {
        let object = try context.insertObject(entityName: entity)
        object.setValue(.string(value), forKey: key)
        return object
    }

    @Test(arguments: TestBackend.allCases)
    func toOneKeepsInverse(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let first = try named(context, "Book", "title", "First")
            let second = try named(context, "Book", "title", "Second")
            let page = try context.insertObject(entityName: "Page")
            page.setDestination(first, forKey: "book")
            #expect(page.destinationID(forKey: "book") == first.objectID)
            #expect(try await first.destinations(forKey: "pages") == [page], "before the save")
            try await context.save()
            #expect(try await first.destinations(forKey: "pages") == [page], "after the save")
            #expect(try await page.destination(forKey: "book") === first)
            #expect(try await container.int("SELECT ZBOOK FROM ZPAGE") == first.objectID.primaryKey)

            // Move the page to the other book.
            page.setDestination(second, forKey: "book")
            #expect(try await first.destinations(forKey: "pages").isEmpty, "the old book lost it before the save")
            #expect(try await second.destinations(forKey: "pages") == [page])
            try await context.save()
            #expect(try await first.destinations(forKey: "pages").isEmpty)
            #expect(try await second.destinations(forKey: "pages") == [page])
            #expect(try await container.int("SELECT ZBOOK FROM ZPAGE") == second.objectID.primaryKey)

            // Clear it.
            page.setDestination(nil, forKey: "book")
            #expect(try await second.destinations(forKey: "pages").isEmpty)
            try await context.save()
            #expect(try await container.int("SELECT count(*) FROM ZPAGE WHERE ZBOOK IS NULL") == 1)
            let fresh = container.newContext()
            let freshSecond = try await fresh.existingObject(with: second.objectID)
            #expect(try await freshSecond.destinations(forKey: "pages").isEmpty)
            #expect(try await fresh.existingObject(with: page.objectID).destinationID(forKey: "book") == nil)

            // From the to-many side: add and remove keep the page's foreign key.
            second.addDestination(page, forKey: "pages")
            #expect(page.destinationID(forKey: "book") == second.objectID)
            try await context.save()
            #expect(try await container.int("SELECT ZBOOK FROM ZPAGE") == second.objectID.primaryKey)
            second.removeDestination(page, forKey: "pages")
            #expect(page.destinationID(forKey: "book") == nil)
            try await context.save()
            #expect(try await container.int("SELECT count(*) FROM ZPAGE WHERE ZBOOK IS NULL") == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func manyToManyAddAndRemove(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let ann = try named(context, "Author", "name", "Ann")
            let bob = try named(context, "Author", "name", "Bob")
            let book = try named(context, "Book", "title", "Joint work")
            book.addDestination(ann, forKey: "authors")
            bob.addDestination(book, forKey: "books")
            #expect(Set(try await book.destinations(forKey: "authors")) == [ann, bob], "before the save")
            #expect(try await ann.destinations(forKey: "books") == [book])
            #expect(try await bob.destinations(forKey: "books") == [book])
            try await context.save()
            #expect(try await container.count("Z_1BOOKS") == 2)
            #expect(Set(try await book.destinations(forKey: "authors")) == [ann, bob], "after the save")

            // Adding twice keeps one row.
            book.addDestination(ann, forKey: "authors")
            try await context.save()
            #expect(try await container.count("Z_1BOOKS") == 2)

            // Remove from either side.
            ann.removeDestination(book, forKey: "books")
            #expect(try await book.destinations(forKey: "authors") == [bob])
            #expect(try await ann.destinations(forKey: "books").isEmpty)
            try await context.save()
            let rows = try await container.sql("SELECT Z_1AUTHORS, Z_2BOOKS FROM Z_1BOOKS")
            #expect(rows.map { [$0[0].int64, $0[1].int64] } == [[bob.objectID.primaryKey, book.objectID.primaryKey]])

            // A fresh context sees the same from both ends.
            let fresh = container.newContext()
            let freshBook = try await fresh.existingObject(with: book.objectID)
            let freshBob = try await fresh.existingObject(with: bob.objectID)
            #expect(try await freshBook.destinations(forKey: "authors") == [freshBob])
            #expect(try await freshBob.destinations(forKey: "books") == [freshBook])
            #expect(try await fresh.existingObject(with: ann.objectID).destinations(forKey: "books").isEmpty)

            // Add and remove in one go leaves nothing.
            let carl = try named(fresh, "Author", "name", "Carl")
            freshBook.addDestination(carl, forKey: "authors")
            freshBook.removeDestination(carl, forKey: "authors")
            try await fresh.save()
            #expect(try await container.count("Z_1BOOKS") == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func oneToOneRepointing(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let ann = try named(context, "Author", "name", "Ann")
            let bob = try named(context, "Author", "name", "Bob")
            let portrait = try context.insertObject(entityName: "Portrait")
            ann.setDestination(portrait, forKey: "portrait")
            #expect(portrait.destinationID(forKey: "author") == ann.objectID, "the inverse is set at once")
            try await context.save()
            func row(_ sql: String, _ object: ManagedObject) async throws -> Int64? {
                try await container.int(sql, [.integer(object.objectID.primaryKey!)])
            }
            #expect(try await row("SELECT ZPORTRAIT FROM ZAUTHOR WHERE Z_PK = ?", ann) == portrait.objectID.primaryKey)
            #expect(try await row("SELECT ZAUTHOR FROM ZPORTRAIT WHERE Z_PK = ?", portrait) == ann.objectID.primaryKey)

            // Give the portrait to Bob: Ann loses it, in the context and in the store.
            bob.setDestination(portrait, forKey: "portrait")
            #expect(ann.destinationID(forKey: "portrait") == nil)
            #expect(portrait.destinationID(forKey: "author") == bob.objectID)
            try await context.save()
            #expect(try await row("SELECT ZPORTRAIT FROM ZAUTHOR WHERE Z_PK = ?", ann) == nil)
            #expect(try await row("SELECT ZPORTRAIT FROM ZAUTHOR WHERE Z_PK = ?", bob) == portrait.objectID.primaryKey)
            #expect(try await row("SELECT ZAUTHOR FROM ZPORTRAIT WHERE Z_PK = ?", portrait) == bob.objectID.primaryKey)

            // The same from a context that loaded only the portrait and Ann: Bob's row is fixed by the save.
            let fresh = container.newContext()
            let freshPortrait = try await fresh.existingObject(with: portrait.objectID)
            let freshAnn = try await fresh.existingObject(with: ann.objectID)
            freshPortrait.setDestination(freshAnn, forKey: "author")
            try await fresh.save()
            #expect(try await row("SELECT ZPORTRAIT FROM ZAUTHOR WHERE Z_PK = ?", ann) == portrait.objectID.primaryKey)
            #expect(try await row("SELECT ZPORTRAIT FROM ZAUTHOR WHERE Z_PK = ?", bob) == nil)
            #expect(try await row("SELECT ZAUTHOR FROM ZPORTRAIT WHERE Z_PK = ?", portrait) == ann.objectID.primaryKey)
            #expect(try await container.int("SELECT count(*) FROM ZAUTHOR WHERE ZPORTRAIT IS NOT NULL") == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func existingObject(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let book = try named(context, "Book", "title", "Known")
            book.setValue(42, forKey: "price")
            // Registered objects come back as the same instance, saved or not.
            #expect(try await context.existingObject(with: book.objectID) === book)
            try await context.save()
            #expect(try await context.existingObject(with: book.objectID) === book)

            let fresh = container.newContext()
            let loaded = try await fresh.existingObject(with: book.objectID)
            #expect(loaded !== book)
            #expect(loaded.objectID == book.objectID)
            #expect(loaded.entity.name == "Book")
            #expect(loaded.value(forKey: "title") == "Known")
            #expect(loaded.value(forKey: "price") == 42.0)
            #expect(try await fresh.existingObject(with: book.objectID) === loaded)
            #expect(fresh.registeredObject(for: book.objectID) === loaded)
            #expect(try await fresh.existingObject(with: try fresh.objectID(entityName: "Book", primaryKey: 1)) === loaded)

            let missing = await #expect(throws: StoreError.self) {
                try await fresh.existingObject(with: try fresh.objectID(entityName: "Book", primaryKey: 999))
            }
            #expect(missing?.code == .objectNotFound)
            // A temporary ID from another context names nothing here.
            let other = container.newContext()
            let unsaved = try other.insertObject(entityName: "Book")
            let temporary = await #expect(throws: StoreError.self) { try await fresh.existingObject(with: unsaved.objectID) }
            #expect(temporary?.code == .objectNotFound)
            // A deleted row is gone.
            context.delete(book)
            try await context.save()
            let deleted = await #expect(throws: StoreError.self) {
                try await container.newContext().existingObject(with: book.objectID)
            }
            #expect(deleted?.code == .objectNotFound)
        }
    }

    /// A transient to-one relationship is kept by the context only; a save that gives its
    /// destination a permanent ID moves the reference along, as it does a stored one's.
    @Test(arguments: TestBackend.allCases)
    func aTransientToOneFollowsItsDestinationThroughASave(backend: TestBackend) async throws {
        let model = try ManagedObjectModel(
            name: "Links",
            entities: [
                EntityDescription(
                    name: "Note",
                    attributes: [AttributeDescription(name: "text", type: .string)],
                    relationships: [
                        RelationshipDescription(name: "draft", destinationEntityName: "Note", isTransient: true),
                        RelationshipDescription(name: "next", destinationEntityName: "Note"),
                    ]
                )
            ]
        )
        try await withContainer(backend, model: model) { container in
            let context = container.newContext()
            let first = try context.insertObject(entityName: "Note")
            let second = try context.insertObject(entityName: "Note")
            first.setDestination(second, forKey: "draft")
            first.setDestination(second, forKey: "next")
            #expect(first.destinationID(forKey: "draft")?.primaryKey == nil)
            try await context.save()
            let saved = try #require(second.objectID.primaryKey)
            #expect(first.destinationID(forKey: "next")?.primaryKey == saved)
            #expect(first.destinationID(forKey: "draft")?.primaryKey == saved)
            #expect(first.destinationID(forKey: "draft") == second.objectID)
        }
    }
}
