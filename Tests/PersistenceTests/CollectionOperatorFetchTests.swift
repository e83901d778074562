import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `@sum`, `@avg`, `@min` and `@max` after a to-many relationship in fetch predicates: as
/// SQL in the store, and on objects not saved yet (a fetch with pending changes).
@Suite("Collection operators in fetch predicates")
struct CollectionOperatorFetchTests {
    @Test(arguments: TestBackend.allCases)
    func aggregatesOfADestinationsAttributeFilterTheFetch(backend: TestBackend) async throws {
        let model = try ManagedObjectModel(xml: ModelFixtures.xml(XcodeKeyPathMappingTests.version1), name: "Library 1")
        try await withContainer(backend, model: model) { container in
            let context = container.newContext()
            func library(_ name: String, widths: [Double?], prices: [String] = []) throws {
                let library = try context.insertObject(entityName: "Library")
                library.setValue(.string(name), forKey: "name")
                for (index, width) in widths.enumerated() {
                    let shelf = try context.insertObject(entityName: "Shelf")
                    shelf.setValue(width.map(AttributeValue.double) ?? .null, forKey: "width")
                    shelf.setDestination(library, forKey: "library")
                    if index == 0 {
                        for price in prices {
                            let book = try context.insertObject(entityName: "Book")
                            book.setValue(.decimal(Decimal(string: price)!), forKey: "price")
                            shelf.addDestination(book, forKey: "books")
                        }
                    }
                }
            }
            try library("Ängelholm", widths: [1.25, 0.75, nil], prices: ["10.99", "12.50"])
            try library("Brno", widths: [2.5], prices: ["5.25"])
            try library("Çorum", widths: [])

            func names(_ format: String, in context: ManagedObjectContext) async throws -> [String] {
                let request = FetchRequest(entityName: "Library", predicate: try Predicate(format: format), sortDescriptors: [.init(key: "name")])
                return try await context.fetch(request).compactMap { $0.value(forKey: "name").stringValue }
            }
            let cases: [(String, [String])] = [
                ("shelves.@sum.width == 2", ["Ängelholm"]),
                ("shelves.@sum.width == 0", ["Çorum"]),  // of none: 0
                ("shelves.@avg.width == 1", ["Ängelholm"]),  // nil widths left out
                ("shelves.@max.width > 2", ["Brno"]),
                ("shelves.@min.width < 1", ["Ängelholm"]),
                ("shelves.@min.width == nil", ["Çorum"]),  // of none: nil
            ]
            // Decimal prices (text on SQLite) are summed and averaged as numbers.
            let shelves: [(String, Int)] = [
                ("books.@sum.price > 23.4 AND books.@sum.price < 23.5", 1), ("books.@avg.price == 5.25", 1), ("books.@max.price > 5", 2),
            ]
            // Unsaved: answered on the objects; saved: answered by the store's SQL.
            for (label, fetching) in [("unsaved", context), ("saved", container.newContext())] {
                if label == "saved" { try await context.save() }
                for (format, expected) in cases {
                    #expect(try await names(format, in: fetching) == expected, "\(label): \(format)")
                }
                for (format, expected) in shelves {
                    let count = try await fetching.fetch(FetchRequest(entityName: "Shelf", predicate: try Predicate(format: format))).count
                    #expect(count == expected, "\(label): \(format)")
                }
            }
        }
    }
}
