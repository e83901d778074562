import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Stores of a model whose names are as long as the store's limit allows: they are created,
/// written, read and migrated in place on every engine.
@Suite("Stores of names at the limit")
struct ModelNameLimitStoreTests {
    typealias F = InPlaceFixtures

    /// The longest names allowed: the entity's table `Z` + 57 = 58 bytes (its PostgreSQL
    /// primary key index, `<table>_pkey`, 63); attribute and to-one columns `Z` + 62 = 63;
    /// the join table `Z_2` + 55 = 58 (its primary key index 63). The secondary indexes on them are longer, and
    /// PostgreSQL shortens their names: they still differ.
    static let entity = "L" + String(repeating: "e", count: 56)
    static let first = "first" + String(repeating: "f", count: 57)
    static let last = "last" + String(repeating: "l", count: 58)
    static let toOne = "holder" + String(repeating: "h", count: 56)
    static let manyToMany = "tags" + String(repeating: "t", count: 51)

    static func body(renamed: Bool = false) -> String {
        // Renamed, `first` and `last` swap names: a cycle of renames through a temporary name.
        let attributes =
            renamed
            ? """
                <attribute name="\(first)" optional="YES" attributeType="String" elementID="\(last)"/>
                <attribute name="\(last)" optional="YES" attributeType="String" elementID="\(first)"/>
            """
            : """
                <attribute name="\(first)" optional="YES" attributeType="String"/>
                <attribute name="\(last)" optional="YES" attributeType="String"/>
            """
        return """
            <entity name="\(entity)">
            \(attributes)
                <relationship name="shelves" optional="YES" toMany="YES" destinationEntity="Shelf" inverseName="\(toOne)"/>
            </entity>
            <entity name="Shelf">
                <relationship name="\(toOne)" optional="YES" maxCount="1" destinationEntity="\(entity)" inverseName="shelves"/>
                <relationship name="\(manyToMany)" optional="YES" toMany="YES" destinationEntity="Tag" inverseName="shelves"/>
            </entity>
            <entity name="Tag">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="shelves" optional="YES" toMany="YES" destinationEntity="Shelf" inverseName="\(manyToMany)"/>
            </entity>
            """
    }

    @Test("the longest names are what the engine keeps")
    func namesAreAtTheLimit() throws {
        let model = try F.model("V1", Self.body())
        let schema = StoreSchema(model: model, dialect: .postgres)
        let names = schema.storeNames()
        let longest = (names.relations + names.columns.flatMap(\.value)).filter { !$0.isSecondaryIndex }.map(\.name.utf8.count).max()
        #expect(longest == ManagedObjectModel.longestStoreName)
        #expect(schema.table(for: Self.entity)?.name.utf8.count == 58)
        #expect(schema.table(for: Self.entity)?.column(for: Self.first)?.name.utf8.count == 63)
    }

    @Test("a store of names at the limit is created, written and read", arguments: TestBackend.allCases)
    func storeAtTheLimit(backend: TestBackend) async throws {
        let model = try F.model("V1", Self.body())
        try await withContainer(backend, model: model) { (container: PersistentContainer) async throws in
            let context = container.newContext()
            let holder = try context.insertObject(entityName: Self.entity)
            holder.setValue("one", forKey: Self.first)
            holder.setValue("two", forKey: Self.last)
            let shelf = try context.insertObject(entityName: "Shelf")
            shelf.setDestination(holder, forKey: Self.toOne)
            let tag = try context.insertObject(entityName: "Tag")
            tag.setValue("blue", forKey: "label")
            shelf.addDestination(tag, forKey: Self.manyToMany)
            try await context.save()

            try await Self.expectSaved(container.newContext())
        }
    }

    @Test("names at the limit migrate in place, through temporary names", arguments: TestEngine.allCases)
    func migrationAtTheLimit(engine: TestEngine) async throws {
        let v1 = try F.model("V1", Self.body())
        let v2 = try F.model("V2", Self.body(renamed: true))
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                let holder = try context.insertObject(entityName: Self.entity)
                holder.setValue("one", forKey: Self.first)
                holder.setValue("two", forKey: Self.last)
                try await context.save()
            }
            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(migration.statements.contains { $0.localizedCaseInsensitiveContains("_MIGRATING") }, "the swap goes through a temporary name")
            try await F.expectFreshSchema(url, v2)
            let container = try await F.open(url, v2)
            let holders = try await container.newContext().fetch(FetchRequest(entityName: Self.entity))
            #expect(holders.map { $0.value(forKey: Self.first) } == ["two"])
            #expect(holders.map { $0.value(forKey: Self.last) } == ["one"])
            await container.store.close()
        }
    }

    @Test("a temporary name stays within the limit, and away from the names in use")
    func temporaryNameFits() {
        let name = "Z" + String(repeating: "A", count: 62)
        let temporary = InPlacePlanner.RenameOrder.temporaryName(for: name, avoiding: [name])
        let longest = ManagedObjectModel.longestStoreName - "_pkey".utf8.count
        #expect(temporary.utf8.count <= longest)
        #expect(temporary.hasSuffix("_MIGRATING"))
        let next = InPlacePlanner.RenameOrder.temporaryName(for: name, avoiding: [name, temporary])
        #expect(next != temporary && next != name && next.utf8.count <= longest)
        #expect(InPlacePlanner.RenameOrder.temporaryName(for: "ZTITLE", avoiding: ["ZTITLE"]) == "ZTITLE_MIGRATING", "a short name is kept whole")
    }

    private static func expectSaved(_ context: ManagedObjectContext) async throws {
        let shelves = try await context.fetch(FetchRequest(entityName: "Shelf"))
        let shelf = try #require(shelves.first)
        let holder = try #require(try await shelf.destination(forKey: toOne))
        #expect(holder.value(forKey: first) == "one")
        #expect(holder.value(forKey: last) == "two")
        let tags = try await shelf.destinations(forKey: manyToMany)
        #expect(tags.map { $0.value(forKey: "label") } == ["blue"])
    }
}
