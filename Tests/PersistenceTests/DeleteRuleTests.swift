import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Cascade, nullify, deny and no-action delete rules, checked in the store's rows.
@Suite("Delete rules")
struct DeleteRuleTests: LibraryObjects {
    @Test(arguments: TestBackend.allCases)
    func cascadeDeletesPages(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let doomed = try book(context, "Doomed")
            let kept = try book(context, "Kept")
            for n: Int64 in 1...3 { _ = try page(context, n, of: doomed) }
            for n: Int64 in 1...2 { _ = try page(context, n, of: kept) }
            try await context.save()
            #expect(try await container.count("ZPAGE") == 5)

            // Delete from a fresh context whose pages were never loaded: the rule runs in the store.
            let other = container.newContext()
            let fetched = try await other.existingObject(with: doomed.objectID)
            other.delete(fetched)
            #expect(fetched.isDeleted)
            try await other.save()
            #expect(try await container.count("ZBOOK") == 1)
            #expect(try await container.count("ZPAGE") == 2)
            #expect(try await container.int("SELECT count(*) FROM ZPAGE WHERE ZBOOK = ?", [.integer(kept.objectID.primaryKey!)]) == 2)
            let remaining = try await container.newContext().fetch(FetchRequest(entityName: "Page"))
            #expect(remaining.allSatisfy { $0.destinationID(forKey: "book") == kept.objectID })
        }
    }

    @Test(arguments: TestBackend.allCases)
    func cascadeWithLoadedPages(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let doomed = try book(context, "Doomed")
            let pages = try (Int64(1)...3).map { try page(context, $0, of: doomed) }
            try await context.save()
            context.delete(doomed)
            try await context.save()
            #expect(try await container.count("ZPAGE") == 0)
            #expect(pages.allSatisfy { $0.isDeleted }, "cascaded objects are marked deleted in the context")
            #expect(context.registeredObject(for: pages[0].objectID) == nil)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func nullifyManyToMany(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let ann = try author(context, "Ann")
            let bob = try author(context, "Bob")
            let first = try book(context, "First")
            let second = try book(context, "Second")
            first.addDestination(ann, forKey: "authors")
            first.addDestination(bob, forKey: "authors")
            second.addDestination(ann, forKey: "authors")
            try await context.save()
            #expect(try await container.count("Z_1BOOKS") == 3)

            context.delete(ann)
            try await context.save()
            #expect(try await container.count("ZAUTHOR") == 1)
            #expect(try await container.count("ZBOOK") == 2, "nullify keeps the books")
            let joins = try await container.sql("SELECT Z_1AUTHORS, Z_2BOOKS FROM Z_1BOOKS")
            #expect(joins.map { [$0[0].int64, $0[1].int64] } == [[bob.objectID.primaryKey, first.objectID.primaryKey]])
            #expect(try await first.destinations(forKey: "authors") == [bob])
            #expect(try await second.destinations(forKey: "authors").isEmpty)
            let fresh = container.newContext()
            let books = try await fresh.fetch(FetchRequest(entityName: "Book", sortDescriptors: [FetchRequest.SortDescriptor(key: "title")]))
            #expect(try await books[0].destinations(forKey: "authors").map { $0.value(forKey: "name") } == ["Bob"])
            #expect(try await books[1].destinations(forKey: "authors").isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func deletingBookNullifiesShelf(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let shelf = try context.insertObject(entityName: "Shelf")
            shelf.setValue("Top", forKey: "label")
            let a = try book(context, "A")
            let b = try book(context, "B")
            a.setDestination(shelf, forKey: "shelf")
            b.setDestination(shelf, forKey: "shelf")
            try await context.save()
            #expect(Set(try await shelf.destinations(forKey: "books")) == [a, b])

            let fresh = container.newContext()
            fresh.delete(try await fresh.existingObject(with: a.objectID))
            try await fresh.save()
            #expect(try await container.count("ZSHELF") == 1, "nullify keeps the shelf")
            let reader = container.newContext()
            let freshShelf = try await reader.existingObject(with: shelf.objectID)
            #expect(try await freshShelf.destinations(forKey: "books").map(\.objectID) == [b.objectID])
            #expect(try await container.int("SELECT count(*) FROM ZBOOK WHERE ZSHELF = ?", [.integer(shelf.objectID.primaryKey!)]) == 1)

            // Deleting a page takes it out of its book's pages (Page.book is nullify).
            let page = try page(context, 1, of: b)
            try await context.save()
            context.delete(page)
            try await context.save()
            #expect(try await b.destinations(forKey: "pages").isEmpty)
            #expect(try await container.count("ZBOOK") == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func denyRefusesAndChangesNothing(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let shelf = try context.insertObject(entityName: "Shelf")
            shelf.setValue("Full", forKey: "label")
            let a = try book(context, "A")
            let b = try book(context, "B")
            a.setDestination(shelf, forKey: "shelf")
            b.setDestination(shelf, forKey: "shelf")
            try await context.save()
            let before = try await container.dump()

            context.delete(shelf)
            let error = await #expect(throws: ValidationError.self) { try await context.save() }
            let issue = try #require(error?.issues.first)
            #expect(error?.issues.count == 1)
            #expect(issue.code == .deleteDenied)
            #expect(issue.entity == "Shelf")
            #expect(issue.key == "books")
            #expect(issue.objectID == shelf.objectID)
            #expect(try await container.dump() == before, "nothing was deleted")
            #expect(context.hasChanges, "the deletion is still pending")

            // Take the books off the shelf, and the deletion goes through.
            shelf.removeDestination(a, forKey: "books")
            shelf.removeDestination(b, forKey: "books")
            try await context.save()
            #expect(try await container.count("ZSHELF") == 0)
            #expect(try await container.count("ZBOOK") == 2)
            #expect(try await container.int("SELECT count(*) FROM ZBOOK WHERE ZSHELF IS NOT NULL") == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func denyAllowsEmptyShelfAndDeletingBooksFirst(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let empty = try context.insertObject(entityName: "Shelf")
            let full = try context.insertObject(entityName: "Shelf")
            let a = try book(context, "A")
            a.setDestination(full, forKey: "shelf")
            try await context.save()
            context.delete(empty)
            try await context.save()
            #expect(try await container.count("ZSHELF") == 1)
            // Deleting the shelf and its books in one save is allowed.
            context.delete(full)
            context.delete(a)
            try await context.save()
            #expect(try await container.count("ZSHELF") == 0)
            #expect(try await container.count("ZBOOK") == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func oneToOneCascade(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let ann = try author(context, "Ann")
            let bob = try author(context, "Bob")
            let portrait = try context.insertObject(entityName: "Portrait")
            portrait.setValue(.binary(Data([1, 2, 3])), forKey: "image")
            ann.setDestination(portrait, forKey: "portrait")
            let other = try context.insertObject(entityName: "Portrait")
            bob.setDestination(other, forKey: "portrait")
            try await context.save()
            #expect(try await container.count("ZPORTRAIT") == 2)

            let fresh = container.newContext()
            fresh.delete(try await fresh.existingObject(with: ann.objectID))
            try await fresh.save()
            #expect(try await container.count("ZAUTHOR") == 1)
            let left = try await container.sql("SELECT Z_PK, ZAUTHOR FROM ZPORTRAIT")
            #expect(left.map { [$0[0].int64, $0[1].int64] } == [[other.objectID.primaryKey, bob.objectID.primaryKey]])

            // Deleting the portrait (nullify) leaves the author without one.
            context.delete(other)
            try await context.save()
            #expect(try await container.count("ZAUTHOR") == 1)
            #expect(try await container.int("SELECT count(*) FROM ZAUTHOR WHERE ZPORTRAIT IS NULL") == 1)
        }
    }

    /// Owner.pets has delete rule No Action: deleting an owner leaves the pets pointing at it.
    static func noActionModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            name: "Pets",
            entities: [
                EntityDescription(
                    name: "Owner",
                    attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "pets",
                            destinationEntityName: "Pet",
                            inverseName: "owner",
                            isToMany: true,
                            deleteRule: .noAction
                        )
                    ]
                ),
                EntityDescription(
                    name: "Pet",
                    attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [
                        RelationshipDescription(name: "owner", destinationEntityName: "Owner", inverseName: "pets", deleteRule: .nullify)
                    ]
                ),
            ]
        )
    }

    @Test(arguments: TestBackend.allCases)
    func noActionLeavesReferences(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.noActionModel()) { container in
            let context = container.newContext()
            let owner = try context.insertObject(entityName: "Owner")
            let pets = try (0..<2).map { _ in try context.insertObject(entityName: "Pet") }
            for pet in pets { pet.setDestination(owner, forKey: "owner") }
            try await context.save()
            let ownerKey = try #require(owner.objectID.primaryKey)

            let fresh = container.newContext()
            fresh.delete(try await fresh.existingObject(with: owner.objectID))
            try await fresh.save()
            #expect(try await container.count("ZOWNER") == 0)
            #expect(try await container.count("ZPET") == 2, "no action deletes nothing else")
            #expect(
                try await container.int("SELECT count(*) FROM ZPET WHERE ZOWNER = ?", [.integer(ownerKey)]) == 2,
                "and leaves the pets' foreign keys as they were"
            )
        }
    }
}
