import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `fetchValues` (Core Data's dictionary result type): the properties of a window read in one
/// statement, equal to what the same objects say, without making them.
@Suite("Values fetches")
struct ValuesFetchTests {
    static let bookProperties: [FetchRequest.Property] = [
        "title", "price", "isbn", "shelf", .init("shelf.label", as: "shelfLabel"),
        .init("pages.@count", as: "pageCount"), .init("pages.@max.number", as: "lastPage"),
    ]

    /// Each request's rows against the objects a fresh context fetches for it, property by
    /// property; with `changed`, the fetching context's unsaved changes do not count.
    @Test(arguments: TestBackend.allCases, [FetchPredicateTests.Seeding.saved, .changed])
    func theValuesOfAWindowAreThoseOfItsObjects(backend: TestBackend, seeding: FetchPredicateTests.Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = try await FetchPredicateTests.seed(container, seeding)
            let byPrice = [FetchRequest.SortDescriptor(key: "price", ascending: false), FetchRequest.SortDescriptor(key: "title")]
            let requests = [
                FetchRequest(entityName: "Book", sortDescriptors: byPrice),
                FetchRequest(entityName: "Book", sortDescriptors: byPrice, fetchLimit: 7, fetchOffset: 5),
                FetchRequest(
                    entityName: "Book",
                    predicate: try Predicate(format: "price < 20 AND shelf.label != nil"),
                    sortDescriptors: [.init(key: "title", caseInsensitive: true)]
                ),
                FetchRequest(entityName: "Book", fetchOffset: 1_000),
            ]
            var compared = 0
            // The objects as saved, in a context of their own that lives through the comparison.
            let saved = container.newContext()
            for request in requests {
                let rows = try await context.fetchValues(request, properties: Self.bookProperties)
                let objects = try await saved.fetch(request)
                #expect(rows.map(\.objectID) == objects.map(\.objectID), "\(request)")
                for (row, object) in zip(rows, objects) {
                    for key in ["title", "price", "isbn"] {
                        #expect(row.value(forKey: key) == object.value(forKey: key), "\(key) of \(object.objectID)")
                    }
                    #expect(row.destinationID(forKey: "shelf") == object.destinationID(forKey: "shelf"))
                    let shelf = try await object.destination(forKey: "shelf")
                    #expect(row.value(forKey: "shelfLabel") == (shelf?.value(forKey: "label") ?? .null))
                    let pages = try await object.destinations(forKey: "pages")
                    #expect(row.value(forKey: "pageCount") == .integer(Int64(pages.count)))
                    let numbers = pages.compactMap { $0.value(forKey: "number").integerValue }
                    #expect(row.value(forKey: "lastPage") == (numbers.max().map { .integer($0) } ?? .null))
                    compared += 1
                }
            }
            #expect(compared > 20)
            let pages = try await context.fetchValues(
                FetchRequest(entityName: "Page", sortDescriptors: [.init(key: "number")]),
                properties: ["number", "book", .init("book.title", as: "bookTitle")]
            )
            let pageObjects = try await saved.fetch(FetchRequest(entityName: "Page", sortDescriptors: [.init(key: "number")]))
            #expect(pages.map { $0.destinationID(forKey: "book") } == pageObjects.map { $0.destinationID(forKey: "book") })
            for (row, page) in zip(pages, pageObjects) {
                let book = try await page.destination(forKey: "book")
                #expect(row.value(forKey: "bookTitle") == (book?.value(forKey: "title") ?? .null))
            }
            #expect(pages.count == pageObjects.count && pages.contains { $0.destinationID(forKey: "book") == nil })
        }
    }

    /// Prices with cents, non-ASCII text and NULLs come back as they were saved.
    @Test(arguments: TestBackend.allCases)
    func usersValuesComeBackAsSaved(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = container.newContext()
            let saved: [(String, Double, String?)] = [("Ærøskøbing — 北京", 10.99, nil), ("O'Brien \"quoted\"", 0.01, "978-ü"), ("Zoë", 999.5, "")]
            for (title, price, isbn) in saved {
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string(title), forKey: "title")
                book.setValue(.double(price), forKey: "price")
                book.setValue(isbn.map(AttributeValue.string) ?? .null, forKey: "isbn")
            }
            try await context.save()
            let rows = try await container.newContext().fetchValues(
                FetchRequest(entityName: "Book", sortDescriptors: [.init(key: "title")]),
                properties: ["title", "price", "isbn", .init("pages.@count", as: "pageCount")]
            )
            let expected = saved.sorted { $0.0.unicodeScalars.lexicographicallyPrecedes($1.0.unicodeScalars) }
            #expect(rows.map { $0.value(forKey: "title").stringValue } == expected.map(\.0))
            // `price` is a Float attribute: compared as the Float it holds.
            #expect(rows.map { Float($0.value(forKey: "price").doubleValue ?? -1) } == expected.map { Float($0.1) })
            #expect(rows.map { $0.value(forKey: "isbn").stringValue } == expected.map(\.2))
            #expect(rows.allSatisfy { $0.value(forKey: "pageCount") == .integer(0) })
            #expect(rows.allSatisfy { $0.value(forKey: "unfetched") == .null && $0.destinationID(forKey: "title") == nil })
        }
    }

    /// What is no property to fetch is refused before the store is asked, saying which key.
    @Test(arguments: TestBackend.allCases)
    func whatCannotBeFetchedIsRefusedByName(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = container.newContext()
            let request = FetchRequest(entityName: "Book")
            for (properties, named) in [
                (["cached"], "cached"), (["pages"], "pages"), (["nothing"], "nothing"), (["title", .init("isbn", as: "title")], "title"),
            ]
                as [([FetchRequest.Property], String)]
            {
                let error = await #expect(throws: ExpressionError.self) { try await context.fetchValues(request, properties: properties) }
                #expect(error?.description.contains(named) == true, "\(String(describing: error))")
            }
        }
    }

    /// A hierarchy's rows name their own entities; a sub-entity's attribute is read on it,
    /// and refused on its parent, which does not have it.
    @Test(arguments: TestBackend.allCases)
    func aHierarchysRowsNameTheirOwnEntities(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let context = container.newContext()
            for (entity, name, key, value) in [
                ("Tool", "Hammer", "weight", AttributeValue.double(1.25)), ("Gadget", "Radio", "voltage", .integer(12)),
                ("Tool", "Saw", "weight", .double(0.5)),
            ] {
                let item = try context.insertObject(entityName: entity)
                item.setValue(.string(name), forKey: "name")
                item.setValue(value, forKey: key)
            }
            try await context.save()
            let reading = container.newContext()
            let items = try await reading.fetchValues(FetchRequest(entityName: "Item", sortDescriptors: [.init(key: "name")]), properties: ["name"])
            #expect(
                items.map { "\($0.objectID.entityName) \($0.value(forKey: "name").stringValue ?? "")" } == [
                    "Tool Hammer", "Gadget Radio", "Tool Saw",
                ]
            )
            let tools = try await reading.fetchValues(
                FetchRequest(entityName: "Tool", sortDescriptors: [.init(key: "weight")]),
                properties: ["name", "weight"]
            )
            #expect(tools.map { $0.value(forKey: "weight") } == [.double(0.5), .double(1.25)])
            var onlyItems = FetchRequest(entityName: "Item")
            onlyItems.includesSubentities = false
            #expect(try await reading.fetchValues(onlyItems, properties: ["name"]).isEmpty)
            await #expect(throws: ExpressionError.self) { try await reading.fetchValues(FetchRequest(entityName: "Item"), properties: ["weight"]) }
        }
    }

    /// The aggregates of a to-many relationship, as the objects' own values add up.
    @Test(arguments: TestBackend.allCases)
    func aggregatesOfAToManyAddUpAsTheObjectsDo(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            _ = try await FetchPredicateTests.seed(container)
            let properties: [FetchRequest.Property] = [
                .init("pages.@sum.number", as: "sum"), .init("pages.@min.number", as: "min"),
                .init("pages.@avg.number", as: "avg"),
            ]
            let saved = container.newContext()
            let request = FetchRequest(entityName: "Book", sortDescriptors: [.init(key: "title")])
            let rows = try await saved.fetchValues(request, properties: properties)
            let books = try await saved.fetch(request)
            #expect(rows.count == books.count && !rows.isEmpty)
            for (row, book) in zip(rows, books) {
                let numbers = try await book.destinations(forKey: "pages").compactMap { $0.value(forKey: "number").integerValue }
                #expect(row.value(forKey: "sum").integerValue == numbers.reduce(0, +), "\(book.objectID)")
                #expect(row.value(forKey: "min").integerValue == numbers.min(), "\(book.objectID)")
                let average = numbers.isEmpty ? nil : Double(numbers.reduce(0, +)) / Double(numbers.count)
                #expect(row.value(forKey: "avg").doubleValue.map { abs($0 - average!) < 1e-9 } ?? (average == nil), "\(book.objectID)")
            }
        }
    }
}
