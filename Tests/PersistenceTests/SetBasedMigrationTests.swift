import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A manager that changes nothing but, being a subclass, makes its steps stream: the
/// reference a set-based step's result is compared with.
final class StreamingManager: MigrationManager, @unchecked Sendable {}

enum LibraryVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Library"
    case v2 = "Library 2"
    var modelName: String { rawValue }
    func nextVersion() -> LibraryVersion? { self == .v1 ? .v2 : nil }
}

enum StreamedLibraryVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Library"
    case v2 = "Library 2"
    var modelName: String { rawValue }
    func nextVersion() -> StreamedLibraryVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? StreamingManager.self : MigrationManager.self }
}

enum StreamedShopVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shop"
    case v2 = "Shop 2"
    var modelName: String { rawValue }
    func nextVersion() -> StreamedShopVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? StreamingManager.self : MigrationManager.self }
}

@Suite struct SetBasedMigrationTests {
    /// Shop 1 → 2 with expressions SQL can say: arithmetic on doubles, appending, a constant.
    func expressionMapping() throws -> MappingModel {
        MappingModel(
            name: "Shop1To2",
            source: try ShopModels.v1(),
            destination: try ShopModels.v2(),
            entityMappings: [
                EntityMapping(
                    name: "ItemToItem",
                    type: .transform,
                    sourceEntityName: "Item",
                    destinationEntityName: "Item",
                    attributeMappings: [
                        PropertyMapping(
                            name: "name",
                            valueExpression: try Expression(format: #"FUNCTION($source.name, "stringByAppendingString:", " (old)")"#)
                        ),
                        PropertyMapping(name: "price", valueExpression: try Expression(format: "$source.price * 1.04 + 1")),
                        PropertyMapping(name: "label", valueExpression: try Expression(format: #""imported""#)),
                    ]
                )
            ]
        )
    }

    /// Writes a closed Shop 1 store at `url` holding `names`, priced 0, 10, 20, ….
    func shopStore(at url: StoreURL, names: [String?]) async throws {
        try await makeClosedStore(at: url, model: try ShopModels.v1()) { container in
            let context = container.newContext()
            for (index, name) in names.enumerated() {
                let item = try context.insertObject(entityName: "Item")
                item.setValue(name.map(AttributeValue.string) ?? .null, forKey: "name")
                item.setValue(.double(Double(index) * 10), forKey: "price")
            }
            try await context.save()
        }
    }

    /// The same rows migrated set-based into one store and streamed into another beside it.
    @Test(arguments: TestEngine.allCases)
    func expressionsRunAsSQLAndGiveWhatStreamingGives(engine: TestEngine) async throws {
        try await engine.withStoreURL { setURL in
            let streamURL = setURL.sibling("streamed")
            let names: [String?] = ["a", nil, "c"]
            let models = try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()])
            try await shopStore(at: setURL, names: names)
            try await shopStore(at: streamURL, names: names)

            let setBased = try await ProgressiveMigrator(
                chain: try MigrationChain(ShopVersion.self, models: models, mappingModels: [try expressionMapping()]),
                logger: testLogger
            )
            .migrateStore(at: setURL)
            #expect(setBased.steps.map(\.strategy) == [.setBased])
            let streamed = try await ProgressiveMigrator(
                chain: try MigrationChain(StreamedShopVersion.self, models: models, mappingModels: [try expressionMapping()]),
                logger: testLogger
            )
            .migrateStore(at: streamURL)
            #expect(streamed.steps.map(\.strategy) == [.streamed])
            try await expectNoLeftovers(setURL)
            try await expectNoLeftovers(streamURL)

            let query = "SELECT Z_PK, Z_ENT, ZNAME, ZPRICE, ZLABEL FROM ZITEM ORDER BY Z_PK"
            let fromSQL = try await storeRows(setURL, query)
            #expect(fromSQL == (try await storeRows(streamURL, query)))
            #expect(fromSQL.map { $0[2] } == [.text("a (old)"), .null, .text("c (old)")])
            #expect(fromSQL.map { $0[3].double } == [1, 11.4, 21.8])
            #expect(fromSQL.map { $0[4] } == Array(repeating: .text("imported"), count: 3))
            #expect(try await storeRows(setURL, "SELECT Z_MAX FROM Z_PRIMARYKEY").map { $0[0] } == [.integer(3)])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func expressionsWhoseSQLMeansSomethingElseStream(engine: TestEngine) throws {
        for format in ["$source.price / 2", "uppercase:($source.name)", "length:($source.name)"] {
            var mapping = try expressionMapping()
            mapping.entityMappings[0].attributeMappings[1] = PropertyMapping(
                name: "price",
                valueExpression: try Expression(format: format == "$source.price / 2" ? format : "$source.price")
            )
            if format != "$source.price / 2" {
                mapping.entityMappings[0].attributeMappings[2] = PropertyMapping(name: "label", valueExpression: try Expression(format: format))
            }
            let result = SetBasedMigration.plan(
                mapping: mapping,
                source: try ShopModels.v1(),
                destination: try ShopModels.v2(),
                dialect: engine.dialect
            )
            guard case .failure(let why) = result else {
                Issue.record("\(format) must not run as SQL")
                continue
            }
            #expect(why.reason.contains("no SQL equivalent"))
        }
    }

    /// The library (to-one, one-to-many, many-to-many, an entity hierarchy) through a
    /// non-inferred identity mapping, set-based and streamed.
    @Test(arguments: TestEngine.allCases)
    func relationshipsOfEveryShapeComeAcrossAsStreamingBringsThem(engine: TestEngine) async throws {
        let v1 = try LibraryModel.make()
        let v2 = try ManagedObjectModel(
            name: "Library 2",
            versionIdentifier: "2",
            entities: v1.entities.map { entity in
                var entity = entity
                entity.versionHashModifier = "2"
                return entity
            }
        )
        let models = try VersionedModel(name: "Library", versions: [v1, v2], currentVersionName: "Library 2")
        var mapping = try MappingModel.inferred(from: v1, to: v2)
        mapping.isInferred = false
        mapping.name = "Library1To2"

        /// The library; with `numbering`, in a store numbered otherwise than a new one.
        func makeLibrary(at url: StoreURL, numbering: EntityNumbering? = nil) async throws {
            try await makeClosedStore(at: url, model: v1, numbering: numbering) { try await fill($0) }
        }
        func fill(_ container: PersistentContainer) async throws {
            do {
                let context = container.newContext()
                let shelf = try context.insertObject(entityName: "Shelf")
                shelf.setValue("fiction", forKey: "label")
                var books: [ManagedObject] = []
                for title in ["A", "B", "C"] {
                    let book = try context.insertObject(entityName: "Book")
                    book.setValue(.string(title), forKey: "title")
                    book.setDestination(shelf, forKey: "shelf")
                    let page = try context.insertObject(entityName: "Page")
                    page.setValue(1, forKey: "number")
                    page.setDestination(book, forKey: "book")
                    books.append(book)
                }
                for name in ["Ann", "Bob"] {
                    let author = try context.insertObject(entityName: "Author")
                    author.setValue(.string(name), forKey: "name")
                    for book in books where name == "Ann" || book.value(forKey: "title") == "C" { author.addDestination(book, forKey: "books") }
                }
                let tool = try context.insertObject(entityName: "Tool")
                tool.setValue("hammer", forKey: "name")
                tool.setValue(1.5, forKey: "weight")
                try await context.save()
            }
        }
        try await engine.withStoreURL { setURL in
            let streamURL = setURL.sibling("streamed")
            try await makeLibrary(at: setURL)
            try await makeLibrary(at: streamURL)
            let plan = try await ProgressiveMigrator(
                chain: try MigrationChain(LibraryVersion.self, models: models, mappingModels: [mapping]),
                logger: testLogger
            )
            .migrateStore(at: setURL)
            #expect(plan.steps.map(\.strategy) == [.setBased])
            _ = try await ProgressiveMigrator(
                chain: try MigrationChain(StreamedLibraryVersion.self, models: models, mappingModels: [mapping]),
                logger: testLogger
            )
            .migrateStore(at: streamURL)
            try await expectNoLeftovers(setURL)
            try await expectNoLeftovers(streamURL)
            try await expectEveryIndex(setURL, of: v2)
            try await expectEveryIndex(streamURL, of: v2)

            let schema = StoreSchema(model: v2, dialect: setURL.testEngine.dialect)
            // Z_OPT counts saves, which differ between the two ways; everything else must not.
            let queries =
                schema.rootTables.map { "SELECT Z_PK, Z_ENT, \($0.allColumns.map(\.name).joined(separator: ", ")) FROM \($0.name) ORDER BY 1" }
                + schema.allJoinTables.map { "SELECT * FROM \($0.name) ORDER BY 1, 2" }
            for query in queries {
                let table = query
                let a = try await storeRows(setURL, query)
                let b = try await storeRows(streamURL, query)
                #expect(a == b, "\(table)")
            }
            // A source numbered as earlier releases numbered it is read by its own
            // Z_PRIMARYKEY: the same store comes out.
            let numberedURL = setURL.sibling("numbered")
            let otherNumbering = try legacyNumbering(of: v1)
            try await makeLibrary(at: numberedURL, numbering: otherNumbering)
            let numberedPlan = try await ProgressiveMigrator(
                chain: try MigrationChain(LibraryVersion.self, models: models, mappingModels: [mapping]),
                logger: testLogger
            )
            .migrateStore(at: numberedURL)
            #expect(numberedPlan.steps.map(\.strategy) == [.setBased])
            for query in queries {
                #expect(try await storeRows(numberedURL, query) == (try await storeRows(setURL, query)), "numbered otherwise: \(query)")
            }
            try await withOpenStore(setURL, model: v2) { container in
                let context = container.newContext()
                let ann = try #require(
                    try await context.fetch(FetchRequest(entityName: "Author", predicate: try Predicate(format: "name == 'Ann'"))).first
                )
                #expect(Set(titles(try await ann.destinations(forKey: "books"))) == ["A", "B", "C"])
                let c = try #require(
                    try await context.fetch(FetchRequest(entityName: "Book", predicate: try Predicate(format: "title == 'C'"))).first
                )
                #expect(Set(try await c.destinations(forKey: "authors").map { $0.value(forKey: "name") }) == ["Ann", "Bob"])
                #expect(try await c.destination(forKey: "shelf")?.value(forKey: "label") == "fiction")
                #expect(try await c.destinations(forKey: "pages").count == 1)
                #expect(try await context.fetch(FetchRequest(entityName: "Item")).map { $0.entity.name } == ["Tool"])
            }
        }
    }
}
