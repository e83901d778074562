import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Saves that meet a row another writer deleted since it was read: a new row may not point
/// at it, and it cannot be deleted a second time. Core Data refuses both through its
/// optimistic lock; here a row never ends up pointing at nothing.
@Suite("Rows deleted since they were read")
struct DeletedSinceReadTests: LibraryObjects {
    /// Pages whose `ZBOOK` names no book.
    private func orphanPages(_ container: PersistentContainer) async throws -> Int64 {
        let d = container.store.schema.dialect
        return try await container.store.database.read {
            try $0.scalar(
                rawSQL:
                    "SELECT count(*) FROM \(d.name("ZPAGE")) WHERE \(d.name("ZBOOK")) IS NOT NULL AND \(d.name("ZBOOK")) NOT IN (SELECT \(d.name("Z_PK")) FROM \(d.name("ZBOOK")))",
                []
            )?.int64 ?? -1
        }
    }

    private func deleteElsewhere(_ id: ObjectID, in container: PersistentContainer) async throws {
        let other = container.newContext()
        other.delete(try await other.existingObject(with: id))
        try await other.save()
    }

    @Test(arguments: TestBackend.allCases)
    func aNewRowCannotPointAtARowDeletedSinceItWasRead(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let gone = try book(setup, "Soon gone")
            try await setup.save()
            let bookID = gone.objectID

            let context = container.newContext()
            let stale = try await context.existingObject(with: bookID)
            try await deleteElsewhere(bookID, in: container)

            let page = try context.insertObject(entityName: "Page")
            page.setValue(.integer(1), forKey: "number")
            page.setDestination(stale, forKey: "book")
            let error = await #expect(throws: StoreError.self) { try await context.save() }
            #expect(error?.code == .objectNotFound)
            #expect(error?.message.contains("Book with primary key \(bookID.primaryKey ?? 0)") == true, "\(String(describing: error))")
            #expect(error?.message.contains("a Page's book") == true, "\(String(describing: error))")
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Page")) == 0, "nothing was saved")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aJoinRowCannotPointAtARowDeletedSinceItWasRead(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let author = try setup.insertObject(entityName: "Author")
            author.setValue(.string("Ann"), forKey: "name")
            _ = try book(setup, "Kept")
            try await setup.save()
            let authorID = author.objectID
            let bookID = try #require(try await setup.fetch(FetchRequest(entityName: "Book")).first).objectID

            let context = container.newContext()
            let staleAuthor = try await context.existingObject(with: authorID)
            let kept = try await context.existingObject(with: bookID)
            try await deleteElsewhere(authorID, in: container)

            kept.addDestination(staleAuthor, forKey: "authors")
            let error = await #expect(throws: StoreError.self) { try await context.save() }
            #expect(error?.code == .objectNotFound)
            let reader = container.newContext()
            #expect(try await reader.existingObject(with: bookID).destinations(forKey: "authors").isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aRowDeletedSinceItWasReadCannotBeDeletedAgain(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let first = try book(setup, "Deleted twice")
            let second = try book(setup, "Deleted once")
            try await setup.save()
            let (firstID, secondID) = (first.objectID, second.objectID)

            let context = container.newContext()
            let stale = try await context.existingObject(with: firstID)
            let other = try await context.existingObject(with: secondID)
            try await deleteElsewhere(firstID, in: container)

            context.delete(stale)
            context.delete(other)
            let error = await #expect(throws: StoreError.self) { try await context.save() }
            #expect(error?.code == .objectNotFound)
            #expect(
                try await container.newContext().count(for: FetchRequest(entityName: "Book")) == 1,
                "the save was refused whole: the other book is still there"
            )
        }
    }

    /// Only the rows a save deletes by name must still be there: pages the context has
    /// loaded, one of them deleted elsewhere since, are the cascade's to find, and the
    /// delete of their book succeeds.
    @Test(arguments: TestBackend.allCases)
    func aDeleteWhosePagesWereDeletedMeanwhileSucceeds(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let owner = try book(setup, "Owner")
            let page = try setup.insertObject(entityName: "Page")
            page.setDestination(owner, forKey: "book")
            try await setup.save()
            let (bookID, pageID) = (owner.objectID, page.objectID)

            let context = container.newContext()
            let stale = try await context.existingObject(with: bookID)
            _ = try await stale.destinations(forKey: "pages")
            try await deleteElsewhere(pageID, in: container)
            context.delete(stale)
            try await context.save()
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Book")) == 0)
        }
    }

    /// A row pointed at and deleted in the same save is not "deleted since it was read":
    /// the save succeeds, and the cascade takes the new page along with its book.
    @Test(arguments: TestBackend.allCases)
    func aRowPointedAtAndDeletedInOneSaveIsNoConflict(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let owner = try book(setup, "Going")
            try await setup.save()

            let context = container.newContext()
            let going = try await context.existingObject(with: owner.objectID)
            let page = try context.insertObject(entityName: "Page")
            page.setDestination(going, forKey: "book")
            context.delete(going)
            try await context.save()
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Book")) == 0)
            #expect(try await orphanPages(container) == 0)
        }
    }

    /// Two writers of their own (two containers: on PostgreSQL two sessions, as two service
    /// replicas have) add pages to books while the other deletes the books.
    ///
    /// The race happened when a page's book was read and then deleted before the page's
    /// save (the save is refused: the book is gone since it was read), beside pages saved
    /// before the delete (gone with their book). Rounds go on, each with new books, until one
    /// has both; the test fails if none of twenty does.
    @Test(arguments: [TestBackend.sqlite, .postgres])
    func pagesAddedWhileTheirBookIsDeletedNeverOutliveIt(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let second = try await PersistentContainer.open(model: try LibraryModel.make(), store: container.store.url, logger: testLogger)
            var totals = PageRace()
            var raced = false
            for round in 1...20 where !raced {
                let setup = container.newContext()
                let books = try (1...8).map { try book(setup, "Round \(round) book \($0)") }
                try await setup.save()
                let outcome = try await race(addingPagesTo: books.map(\.objectID), through: second, deletingThrough: container)
                // One round must have both, not the rounds between them.
                raced = outcome.raced
                totals.saved += outcome.saved
                totals.refusedAfterRead += outcome.refusedAfterRead
                #expect(try await orphanPages(container) == 0, "\(outcome.saved) pages were saved; none may point at a deleted book")
                #expect(
                    try await container.newContext().count(for: FetchRequest(entityName: "Page")) == 0,
                    "every book was deleted, with its pages"
                )
            }
            await second.store.close()
            #expect(raced, "in twenty rounds none had a page saved and one refused after its book was read (in all: \(totals))")
        }
    }

    /// What one round of the race gave.
    struct PageRace: CustomStringConvertible {
        /// Pages saved (before their book's delete).
        var saved = 0
        /// Saves refused because the book, read before, was deleted meanwhile.
        var refusedAfterRead = 0
        var raced: Bool { saved > 0 && refusedAfterRead > 0 }
        var description: String { "\(saved) saved, \(refusedAfterRead) refused after their book was read" }
    }

    /// Six page saves per book through `second` and each book's delete through `container`, all at once.
    func race(
        addingPagesTo bookIDs: [ObjectID],
        through second: PersistentContainer,
        deletingThrough container: PersistentContainer
    ) async throws -> PageRace {
        try await withThrowingTaskGroup(of: PageRace.self) { group in
            for bookID in bookIDs {
                for number in 1...6 {
                    group.addTask {
                        let context = second.newContext()
                        guard let owner = try? await context.existingObject(with: bookID) else { return PageRace() }
                        let page = try context.insertObject(entityName: "Page")
                        page.setValue(.integer(Int64(number)), forKey: "number")
                        page.setDestination(owner, forKey: "book")
                        do {
                            try await context.save()
                            return PageRace(saved: 1)
                        } catch let error as StoreError where error.code == .objectNotFound {
                            return PageRace(refusedAfterRead: 1)
                        }
                    }
                }
                group.addTask {
                    try await deleteElsewhere(bookID, in: container)
                    return PageRace()
                }
            }
            return try await group.reduce(into: PageRace()) { total, one in
                total.saved += one.saved
                total.refusedAfterRead += one.refusedAfterRead
            }
        }
    }
}
