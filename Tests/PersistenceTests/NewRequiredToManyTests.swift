import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A new required to-many relationship with no minimum count is inferred, as Core Data infers
/// it: every existing row starts with none. One needing members has nothing to come from.
@Suite("A new required to-many relationship")
struct NewRequiredToManyTests {
    static func model(_ version: Int, minCount: Int = 0) throws -> ManagedObjectModel {
        let books =
            version == 1
            ? ""
            : """
            <relationship name="books" toMany="YES" minCount="\(minCount)" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>
            """
        let book =
            version == 1
            ? ""
            : """
            <entity name="Book" representedClassName="Book">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
            </entity>
            """
        return try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Shelf" representedClassName="Shelf">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    \(books)
                </entity>
                \(book)
                """
            ),
            name: "Shelves \(version)",
            file: ModelFixtures.file
        )
    }

    static let names = ["Küche", "Flur", "Arbeitszimmer"]

    @Test(arguments: TestEngine.allCases)
    func isInferredEmpty(engine: TestEngine) async throws {
        let v1 = try Self.model(1)
        let v2 = try Self.model(2)
        let models = try VersionedModel(name: "Shelves", versions: [v1, v2], currentVersionName: "Shelves 2")
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: v1, options: .createIfMissing) { container in
                let context = container.newContext()
                for name in Self.names {
                    try context.insertObject(entityName: "Shelf").setValue(.string(name), forKey: "name")
                }
                try await context.save()
            }
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).migrateStore(at: url)
            #expect(plan.steps.count == 1)
            try await withOpenStore(url, model: v2) { container in
                let context = container.newContext()
                let shelves = try await context.fetch(FetchRequest(entityName: "Shelf"))
                #expect(Set(shelves.compactMap { $0.value(forKey: "name").stringValue }) == Set(Self.names))
                for shelf in shelves { #expect(try await shelf.destinations(forKey: "books").isEmpty) }
                // Empty is valid: a shelf still saves, and takes books.
                let shelf = try #require(shelves.first)
                shelf.setValue(.string("Keller"), forKey: "name")
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string("Der Process"), forKey: "title")
                shelf.addDestination(book, forKey: "books")
                try await context.save()
            }
            #expect(try await storeRows(url, "SELECT count(*) FROM ZBOOK WHERE ZSHELF IS NOT NULL") == [[.integer(1)]])
        }
    }

    @Test func oneNeedingMembersIsRefusedSayingSo() throws {
        let error = #expect(throws: MigrationError.self) { try MappingModel.inferred(from: try Self.model(1), to: try Self.model(2, minCount: 1)) }
        #expect(error?.description.contains("the new relationship 'books' needs at least 1 object") == true, "\(String(describing: error))")
    }
}
