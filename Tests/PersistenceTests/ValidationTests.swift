import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The model's rules, checked by save: every failure code, every invalid object reported,
/// and a refused save writes nothing.
@Suite("Validation")
struct ValidationTests {
    struct Found: Hashable, CustomStringConvertible {
        let entity: String
        let key: String?
        let code: ValidationError.Issue.Code
        var description: String { "\(entity).\(key ?? "-"): \(code)" }
    }

    /// Saves and returns the issues the refusal listed; records a failure when the save succeeds.
    func refusal(_ context: ManagedObjectContext, sourceLocation: SourceLocation = #_sourceLocation) async -> Set<Found> {
        do {
            try await context.save()
            Issue.record("the save should have been refused", sourceLocation: sourceLocation)
            return []
        } catch let error as ValidationError {
            #expect(!error.issues.isEmpty, sourceLocation: sourceLocation)
            for issue in error.issues { #expect(!issue.message.isEmpty, sourceLocation: sourceLocation) }
            return Set(error.issues.map { Found(entity: $0.entity, key: $0.key, code: $0.code) })
        } catch {
            Issue.record("expected a ValidationError, got \(error)", sourceLocation: sourceLocation)
            return []
        }
    }

    func validBook(_ context: ManagedObjectContext, _ title: String = "Valid") throws -> ManagedObject {
        let book = try context.insertObject(entityName: "Book")
        book.setValue(.string(title), forKey: "title")
        book.setValue(10.0, forKey: "price")
        return book
    }

    @Test(arguments: TestBackend.allCases)
    func eachAttributeRule(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let cases: [(String, (ManagedObjectContext) throws -> Void, Found)] = [
                ("missing title", { c in _ = try c.insertObject(entityName: "Book") }, Found(entity: "Book", key: "title", code: .missingValue)),
                ("price nil", { c in try validBook(c).setValue(.null, forKey: "price") }, Found(entity: "Book", key: "price", code: .missingValue)),
                (
                    "title of the wrong type", { c in try validBook(c).setValue(5, forKey: "title") },
                    Found(entity: "Book", key: "title", code: .wrongType)
                ),
                (
                    "price of the wrong type", { c in try validBook(c).setValue("cheap", forKey: "price") },
                    Found(entity: "Book", key: "price", code: .wrongType)
                ),
                (
                    "Integer 16 overflow",
                    { c in
                        let page = try c.insertObject(entityName: "Page")
                        page.setValue(.integer(Int64(Int16.max) + 1), forKey: "number")
                    }, Found(entity: "Page", key: "number", code: .wrongType)
                ),
                ("price -1", { c in try validBook(c).setValue(-1.0, forKey: "price") }, Found(entity: "Book", key: "price", code: .valueTooSmall)),
                ("price 1001", { c in try validBook(c).setValue(1001, forKey: "price") }, Found(entity: "Book", key: "price", code: .valueTooLarge)),
                (
                    "empty name", { c in try c.insertObject(entityName: "Author").setValue("", forKey: "name") },
                    Found(entity: "Author", key: "name", code: .stringTooShort)
                ),
                (
                    "41-character name",
                    { c in
                        try c.insertObject(entityName: "Author").setValue(.string(String(repeating: "x", count: 41)), forKey: "name")
                    }, Found(entity: "Author", key: "name", code: .stringTooLong)
                ),
                ("missing name", { c in _ = try c.insertObject(entityName: "Author") }, Found(entity: "Author", key: "name", code: .missingValue)),
                (
                    "unknown attribute", { c in try validBook(c).setValue("x", forKey: "subtitle") },
                    Found(entity: "Book", key: "subtitle", code: .unknownKey)
                ),
                (
                    "unknown relationship",
                    { c in
                        let book = try validBook(c)
                        book.setDestination(try c.insertObject(entityName: "Shelf"), forKey: "publisher")
                    }, Found(entity: "Book", key: "publisher", code: .unknownKey)
                ),
                (
                    "to-many key used as to-one",
                    { c in
                        let book = try validBook(c)
                        book.setDestination(try c.insertObject(entityName: "Shelf"), forKey: "pages")
                    }, Found(entity: "Book", key: "pages", code: .unknownKey)
                ),
            ]
            for (name, make, expected) in cases {
                let context = container.newContext()
                try make(context)
                let found = await refusal(context)
                #expect(found == [expected], "\(name)")
                for table in ["ZBOOK", "ZAUTHOR", "ZPAGE", "ZSHELF"] {
                    #expect(try await container.count(table) == 0, "\(name): nothing written to \(table)")
                }
            }
            // The bounds themselves are allowed.
            let context = container.newContext()
            try validBook(context, "free").setValue(0, forKey: "price")
            try validBook(context, "dear").setValue(1000, forKey: "price")
            try context.insertObject(entityName: "Author").setValue("x", forKey: "name")
            try context.insertObject(entityName: "Author").setValue(.string(String(repeating: "é", count: 40)), forKey: "name")
            try await context.save()
            #expect(try await container.count("ZAUTHOR") == 2)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func tooManyObjects(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let shelf = try context.insertObject(entityName: "Shelf")
            let books = try (1...3).map { try validBook(context, "Book \($0)") }
            for book in books { book.setDestination(shelf, forKey: "shelf") }
            try await context.save()
            let before = try await container.dump()

            // A fourth book, put on the shelf from the book's side, in a context that never loaded the shelf's books.
            let other = container.newContext()
            let fourth = try validBook(other, "Book 4")
            fourth.setDestination(try await other.existingObject(with: shelf.objectID), forKey: "shelf")
            #expect(await refusal(other) == [Found(entity: "Shelf", key: "books", code: .tooManyObjects)])
            #expect(try await container.dump() == before, "the insert was rolled back")

            // From the shelf's side too.
            let fifth = try validBook(context, "Book 5")
            shelf.addDestination(fifth, forKey: "books")
            #expect(await refusal(context) == [Found(entity: "Shelf", key: "books", code: .tooManyObjects)])
            #expect(try await container.dump() == before)

            // Make room, and both saves go through.
            shelf.removeDestination(books[0], forKey: "books")
            try await context.save()
            #expect(try await container.int("SELECT count(*) FROM ZBOOK WHERE ZSHELF = ?", [.integer(shelf.objectID.primaryKey!)]) == 3)
            #expect(await refusal(other) == [Found(entity: "Shelf", key: "books", code: .tooManyObjects)])
        }
    }

    /// Chapter.book is a required to-one.
    static func requiredToOneModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            name: "Chapters",
            entities: [
                EntityDescription(
                    name: "Novel",
                    attributes: [AttributeDescription(name: "title", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "chapters",
                            destinationEntityName: "Chapter",
                            inverseName: "novel",
                            isToMany: true,
                            deleteRule: .cascade
                        )
                    ]
                ),
                EntityDescription(
                    name: "Chapter",
                    attributes: [AttributeDescription(name: "title", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "novel",
                            destinationEntityName: "Novel",
                            inverseName: "chapters",
                            isOptional: false,
                            deleteRule: .nullify
                        )
                    ]
                ),
            ]
        )
    }

    @Test(arguments: TestBackend.allCases)
    func requiredToOne(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.requiredToOneModel()) { container in
            let context = container.newContext()
            let chapter = try context.insertObject(entityName: "Chapter")
            #expect(await refusal(context) == [Found(entity: "Chapter", key: "novel", code: .missingValue)])
            let novel = try context.insertObject(entityName: "Novel")
            chapter.setDestination(novel, forKey: "novel")
            try await context.save()
            #expect(try await container.count("ZCHAPTER") == 1)
            // Clearing it again is refused too.
            chapter.setDestination(nil, forKey: "novel")
            #expect(await refusal(context) == [Found(entity: "Chapter", key: "novel", code: .missingValue)])
            #expect(try await container.int("SELECT ZNOVEL FROM ZCHAPTER") == novel.objectID.primaryKey)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func everyInvalidObjectIsReported(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let seed = try validBook(context, "Seed")
            try context.insertObject(entityName: "Author").setValue("Seed author", forKey: "name")
            try await context.save()
            let before = try await container.dump()

            let untitled = try context.insertObject(entityName: "Book")
            untitled.setValue(2000, forKey: "price")
            let nameless = try context.insertObject(entityName: "Author")
            nameless.setValue(.string(String(repeating: "n", count: 41)), forKey: "name")
            let page = try context.insertObject(entityName: "Page")
            page.setValue("seven", forKey: "number")
            page.setDestination(seed, forKey: "book")
            seed.setValue(-5, forKey: "price")
            let good = try validBook(context, "Fine")

            let found = await refusal(context)
            #expect(
                found == [
                    Found(entity: "Book", key: "title", code: .missingValue),
                    Found(entity: "Book", key: "price", code: .valueTooLarge),
                    Found(entity: "Author", key: "name", code: .stringTooLong),
                    Found(entity: "Page", key: "number", code: .wrongType),
                    Found(entity: "Book", key: "price", code: .valueTooSmall),
                ]
            )
            #expect(try await container.dump() == before, "a refused save writes nothing")

            // The context keeps every change: fix them one by one, and the save goes through.
            #expect(context.hasChanges)
            #expect(Set(context.insertedObjects) == [untitled, nameless, page, good])
            #expect(context.updatedObjects == [seed])
            #expect(untitled.objectID.isTemporaryID)
            untitled.setValue("Titled", forKey: "title")
            untitled.setValue(20, forKey: "price")
            nameless.setValue("Named", forKey: "name")
            page.setValue(7, forKey: "number")
            #expect(await refusal(context) == [Found(entity: "Book", key: "price", code: .valueTooSmall)])
            seed.setValue(5, forKey: "price")
            try await context.save()
            #expect(!context.hasChanges)
            #expect(try await container.count("ZBOOK") == 3)
            #expect(try await container.count("ZAUTHOR") == 2)
            #expect(try await container.int("SELECT ZBOOK FROM ZPAGE WHERE ZNUMBER = 7") == seed.objectID.primaryKey)
        }
    }
}
