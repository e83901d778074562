import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// What a context knows about its unsaved changes, what a save does with them, and
/// optimistic locking between contexts.
@Suite("Change tracking and saves")
struct ChangeTrackingTests {
    @Test(arguments: TestBackend.allCases)
    func insertedUpdatedDeleted(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            #expect(!context.hasChanges)
            #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)

            let book = try context.insertObject(entityName: "Book")
            book.setValue("Draft", forKey: "title")
            #expect(context.hasChanges)
            #expect(book.hasChanges && book.isInserted)
            #expect(context.insertedObjects == [book])
            #expect(context.updatedObjects.isEmpty, "an inserted object is not also updated")
            let temporary = book.objectID
            #expect(temporary.isTemporaryID && temporary.primaryKey == nil)
            #expect(context.registeredObject(for: temporary) === book)

            try await context.save()
            #expect(!context.hasChanges && !book.hasChanges && !book.isInserted)
            #expect(context.insertedObjects.isEmpty)
            #expect(book.changedKeys.isEmpty)
            let permanent = book.objectID
            #expect(!permanent.isTemporaryID)
            #expect(permanent.primaryKey == 1)
            #expect(permanent != temporary)
            #expect(context.registeredObject(for: permanent) === book)
            // The temporary ID, kept, still finds the saved object (ObjectIdentityTests).
            #expect(context.registeredObject(for: temporary) === book)
            #expect(permanent.description == "Book/p1")

            book.setValue("Final", forKey: "title")
            #expect(book.changedKeys == ["title"])
            #expect(context.updatedObjects == [book])
            #expect(context.insertedObjects.isEmpty)
            book.setValue(12.0, forKey: "price")
            #expect(book.changedKeys == ["title", "price"])
            try await context.save()
            #expect(context.updatedObjects.isEmpty && book.changedKeys.isEmpty)

            // Setting a value to what it already is changes nothing.
            book.setValue("Final", forKey: "title")
            #expect(!context.hasChanges && book.changedKeys.isEmpty)

            context.delete(book)
            #expect(book.isDeleted)
            #expect(context.deletedObjects == [book])
            #expect(context.hasChanges)
            try await context.save()
            #expect(!context.hasChanges && context.deletedObjects.isEmpty)
            #expect(try await container.count("ZBOOK") == 0)

            // An object inserted and deleted before any save never reaches the store.
            let ghost = try context.insertObject(entityName: "Book")
            context.delete(ghost)
            #expect(!context.hasChanges)
            try await context.save()
            #expect(try await container.zMax("Book") == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func zOptCountsSaves(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let book = try context.insertObject(entityName: "Book")
            book.setValue("v1", forKey: "title")
            let untouched = try context.insertObject(entityName: "Book")
            untouched.setValue("same", forKey: "title")
            try await context.save()
            let pk = try #require(book.objectID.primaryKey)
            func zOpt(_ key: Int64) async throws -> Int64? { try await container.int("SELECT Z_OPT FROM ZBOOK WHERE Z_PK = ?", [.integer(key)]) }
            #expect(try await zOpt(pk) == 1)
            for (n, title) in ["v2", "v3", "v4"].enumerated() {
                book.setValue(.string(title), forKey: "title")
                try await context.save()
                #expect(try await zOpt(pk) == Int64(n + 2))
            }
            #expect(try await zOpt(untouched.objectID.primaryKey!) == 1, "rows not changed keep their Z_OPT")
            // Another context reads the current version and can update on top of it.
            let other = container.newContext()
            let copy = try await other.existingObject(with: book.objectID)
            copy.setValue("v5", forKey: "title")
            try await other.save()
            #expect(try await zOpt(pk) == 5)
            #expect(try await container.sql("SELECT ZTITLE FROM ZBOOK WHERE Z_PK = ?", [.integer(pk)]).first?[0] == .text("v5"))
        }
    }

    /// A save that changes only an object's many-to-many rows leaves its own row, and so its
    /// `Z_OPT`, as it was: the object's version stays in step with the row, and its next
    /// change saves rather than being taken for someone else's.
    @Test(arguments: TestBackend.allCases)
    func aSaveOfJoinRowsOnlyKeepsTheObjectInStepWithItsRow(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let author = try context.insertObject(entityName: "Author")
            author.setValue("Åsa Larsson", forKey: "name")
            let book = try context.insertObject(entityName: "Book")
            book.setValue("Solstorm", forKey: "title")
            try await context.save()
            let pk = try #require(author.objectID.primaryKey)

            author.addDestination(book, forKey: "books")
            try await context.save()
            #expect(try await container.int("SELECT Z_OPT FROM ZAUTHOR WHERE Z_PK = ?", [.integer(pk)]) == 1, "the author's row was not written")

            author.setValue("Åsa Larsson (SE)", forKey: "name")
            try await context.save()
            #expect(
                try await container.sql("SELECT ZNAME, Z_OPT FROM ZAUTHOR WHERE Z_PK = ?", [.integer(pk)]).map(\.values)
                    == [[.text("Åsa Larsson (SE)"), .integer(2)]]
            )
        }
    }

    @Test(arguments: TestBackend.allCases)
    func optimisticLockingConflict(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let original = try setup.insertObject(entityName: "Book")
            original.setValue("Original", forKey: "title")
            try await setup.save()

            let first = container.newContext()
            let second = container.newContext()
            let a = try #require(try await first.fetch(FetchRequest(entityName: "Book")).first)
            let b = try #require(try await second.fetch(FetchRequest(entityName: "Book")).first)
            #expect(a !== b)
            a.setValue("First wins", forKey: "title")
            b.setValue("Second loses", forKey: "title")
            // The loser's save also inserts: that must be rolled back with it.
            let extra = try second.insertObject(entityName: "Book")
            extra.setValue("Extra", forKey: "title")

            try await first.save()
            let before = try await container.dump()
            let error = await #expect(throws: StoreError.self) { try await second.save() }
            #expect(error?.code == .conflict)
            #expect(try await container.dump() == before, "the conflicting save wrote nothing")
            #expect(try await container.sql("SELECT ZTITLE, Z_OPT FROM ZBOOK").map(\.values) == [[.text("First wins"), .integer(2)]])
            #expect(second.hasChanges, "the loser keeps its changes")
            #expect(extra.objectID.isTemporaryID)

            // Updating a row another context has deleted since is a conflict too.
            let third = container.newContext()
            let c = try await third.existingObject(with: original.objectID)
            first.delete(a)
            try await first.save()
            c.setValue("Too late", forKey: "title")
            let gone = await #expect(throws: StoreError.self) { try await third.save() }
            #expect(gone?.code == .conflict)
            #expect(try await container.count("ZBOOK") == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func failedSaveKeepsContextUsable(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let books = try (0..<3).map { i -> ManagedObject in
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string("Book \(i)"), forKey: "title")
                return book
            }
            books[1].setValue(-1, forKey: "price")
            let before = try await container.dump()
            await #expect(throws: ValidationError.self) { try await context.save() }
            #expect(try await container.dump() == before)
            #expect(try await container.zMax("Book") == 0, "no primary keys were used up")
            #expect(books.allSatisfy { $0.objectID.isTemporaryID })
            books[1].setValue(1, forKey: "price")
            try await context.save()
            #expect(books.map { $0.objectID.primaryKey } == [1, 2, 3])
            #expect(try await container.zMax("Book") == 3)
        }
    }
}
