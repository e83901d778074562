import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// An abstract entity with sub-entities, sharing the root's table.
@Suite("Entity inheritance")
struct InheritanceTests {
    @Test(arguments: TestBackend.allCases)
    func fetchThroughTheHierarchy(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let tool = try context.insertObject(entityName: "Tool")
            tool.setValue("Hammer", forKey: "name")
            tool.setValue(1.5, forKey: "weight")
            let gadget = try context.insertObject(entityName: "Gadget")
            gadget.setValue("Radio", forKey: "name")
            gadget.setValue(12, forKey: "voltage")
            try await context.save()
            #expect(tool.objectID.rootEntityName == "Item" && gadget.objectID.rootEntityName == "Item")

            // Both rows in ZITEM, told apart by Z_ENT.
            let rows = try await container.sql("SELECT Z_PK, Z_ENT, ZNAME, ZWEIGHT, ZVOLTAGE FROM ZITEM ORDER BY Z_PK")
            let schema = container.store.schema
            let toolNumber = try #require(schema.table(for: "Tool")?.entityNumber)
            let gadgetNumber = try #require(schema.table(for: "Gadget")?.entityNumber)
            #expect(
                rows.map(\.values) == [
                    [.integer(1), .integer(Int64(toolNumber)), .text("Hammer"), .double(1.5), .null],
                    [.integer(2), .integer(Int64(gadgetNumber)), .text("Radio"), .null, .integer(12)],
                ]
            )

            let fresh = container.newContext()
            let items = try await fresh.fetch(FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "name")]))
            #expect(items.map(\.entity.name) == ["Tool", "Gadget"])
            #expect(items.map { $0.value(forKey: "name") } == ["Hammer", "Radio"])
            #expect(items[0].value(forKey: "weight") == 1.5)
            #expect(items[1].value(forKey: "voltage") == 12)
            #expect(items[0].objectID.entityName == "Tool")
            #expect(items[0].objectID == tool.objectID)

            #expect(titles(try await fresh.fetch(FetchRequest(entityName: "Tool")), key: "name") == ["Hammer"])
            #expect(titles(try await fresh.fetch(FetchRequest(entityName: "Gadget")), key: "name") == ["Radio"])
            #expect(try await fresh.count(for: FetchRequest(entityName: "Item")) == 2)

            // Without sub-entities an abstract entity has no instances; a concrete one has its own.
            #expect(try await fresh.fetch(FetchRequest(entityName: "Item", includesSubentities: false)).isEmpty)
            #expect(try await fresh.count(for: FetchRequest(entityName: "Item", includesSubentities: false)) == 0)
            #expect(titles(try await fresh.fetch(FetchRequest(entityName: "Tool", includesSubentities: false)), key: "name") == ["Hammer"])

            // Predicates on inherited and own attributes.
            let radio = FetchRequest(entityName: "Item", predicate: try Predicate(format: "name BEGINSWITH 'R'"))
            #expect(try await fresh.fetch(radio).map(\.entity.name) == ["Gadget"])
            let heavy = FetchRequest(entityName: "Tool", predicate: try Predicate(format: "weight > 1 AND name == 'Hammer'"))
            #expect(try await fresh.count(for: heavy) == 1)

            // existingObject finds the concrete entity from a root-table ID.
            let byKey = try await container.newContext().existingObject(with: try fresh.objectID(entityName: "Gadget", primaryKey: 2))
            #expect(byKey.entity.name == "Gadget")
            #expect(byKey.value(forKey: "voltage") == 12)
        }
    }

    /// A store's `Z_PRIMARYKEY` says what its `Z_ENT` values mean: Apple's stores are numbered
    /// by inheritance tree, the first stores of this framework by name. Rows are read and
    /// written by the store's own numbers, whichever a new store would get.
    @Test(arguments: TestEngine.allCases)
    func aStoreNumberedOtherwiseIsReadAndWrittenByItsOwnNumbers(engine: TestEngine) async throws {
        let model = try LibraryModel.make()
        let treeOrder = EntityNumbering.coreData(model)
        let nameOrder = EntityNumbering.nameOrder(model)
        #expect(treeOrder.number(of: "Item") == nameOrder.number(of: "Gadget") && treeOrder != nameOrder, "\(treeOrder) against \(nameOrder)")
        let numbering = try legacyNumbering(of: model)
        try await engine.withStoreURL { url in
            try createStore(at: url, model: model, numbering: numbering)
            try await withOpenStore(url, model: model) { container in
                #expect(container.store.schema.numbering == numbering)
                let context = container.newContext()
                let tool = try context.insertObject(entityName: "Tool")
                tool.setValue("Hammer", forKey: "name")
                let gadget = try context.insertObject(entityName: "Gadget")
                gadget.setValue("Radio", forKey: "name")
                try await context.save()
            }
            let stored = try await storeRows(url, "SELECT ZNAME, Z_ENT FROM ZITEM ORDER BY Z_PK").map { [$0[0].text ?? "", "\($0[1].int64 ?? 0)"] }
            #expect(stored == [["Hammer", "\(numbering.number(of: "Tool")!)"], ["Radio", "\(numbering.number(of: "Gadget")!)"]])
            let maxima = try await storeRows(url, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_MAX > 0").map {
                "\($0[0].text ?? "") \($0[1].int64 ?? 0)"
            }
            // Keys are counted on the root's row alone; a sub-entity's stays 0, as in Apple's stores.
            #expect(maxima == ["Item 2"], "\(maxima)")
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let gadgets = try await context.fetch(FetchRequest(entityName: "Gadget"))
                let items = try await context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "name")]))
                #expect(gadgets.map { $0.value(forKey: "name") } == ["Radio"])
                #expect(items.map(\.entity.name) == ["Tool", "Gadget"])
            }
        }
    }

    /// `v1`'s next version, `<name> 2`, in which `entityName` gains an optional `colour` (an
    /// inferred, in-place step), and the two as one versioned model.
    static func nextVersion(
        of v1: ManagedObjectModel,
        named name: String,
        addingColourTo entityName: String
    ) throws
        -> (ManagedObjectModel, VersionedModel)
    {
        let v2 = try ManagedObjectModel(
            name: "\(name) 2",
            versionIdentifier: "2",
            entities: v1.entities.map { entity in
                var entity = entity
                if entity.name == entityName { entity.attributes.append(AttributeDescription(name: "colour", type: .string)) }
                return entity
            }
        )
        return (v2, try VersionedModel(name: name, versions: [v1, v2], currentVersionName: v2.name))
    }

    /// An in-place step reads the store by its own numbers and leaves it numbered as a new
    /// store of the destination is: row for row the store a new-numbered source gives.
    @Test(arguments: TestEngine.allCases)
    func aStoreNumberedOtherwiseMigratesInPlaceToTheStoreANewOneGives(engine: TestEngine) async throws {
        let v1 = try LibraryModel.make()
        let (v2, models) = try Self.nextVersion(of: v1, named: "Library", addingColourTo: "Tool")
        let otherNumbering = try legacyNumbering(of: v1)
        func fill(_ container: PersistentContainer) async throws {
            let context = container.newContext()
            for (name, weight) in [("Hammer", 1.5), ("Säge", 0.75)] {
                let tool = try context.insertObject(entityName: "Tool")
                tool.setValue(.string(name), forKey: "name")
                tool.setValue(.double(weight), forKey: "weight")
            }
            let gadget = try context.insertObject(entityName: "Gadget")
            gadget.setValue("Radio", forKey: "name")
            gadget.setValue(12, forKey: "voltage")
            try await context.save()
        }
        try await engine.withStoreURL { reference in
            let numbered = reference.sibling("numbered")
            try await makeClosedStore(at: reference, model: v1) { try await fill($0) }
            try await makeClosedStore(at: numbered, model: v1, numbering: otherNumbering) { try await fill($0) }
            for url in [reference, numbered] {
                let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).migrateStore(at: url)
                #expect(plan.steps.map(\.strategy) == [.inPlace])
            }
            let queries = [
                "SELECT Z_PK, Z_ENT, ZNAME, ZWEIGHT, ZVOLTAGE, ZCOLOUR FROM ZITEM ORDER BY Z_PK",
                "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT",
            ]
            for query in queries {
                let expected = try await storeRows(reference, query)
                #expect(expected.count >= 3)
                #expect(try await storeRows(numbered, query) == expected, "\(query)")
            }
            try await withOpenStore(numbered, model: v2) { container in
                let items = try await container.newContext().fetch(
                    FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "name")])
                )
                #expect(items.map(\.entity.name) == ["Tool", "Gadget", "Tool"])
            }
        }
    }

    /// Tools and gadgets under an abstract item, and tags shared by tools: the tools' and
    /// tags' numbers differ between Core Data's tree order and name order, and so does the
    /// name of the tags' join table (`Z_<n>TOOLS`).
    static let taggedTools = """
        <entity name="Item" isAbstract="YES"><attribute name="name" optional="YES" attributeType="String"/></entity>
        <entity name="Gadget" parentEntity="Item"><attribute name="voltage" optional="YES" attributeType="Integer 32"/></entity>
        <entity name="Tool" parentEntity="Item">
            <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="tools" inverseEntity="Tag"/>
        </entity>
        <entity name="Tag">
            <attribute name="label" optional="YES" attributeType="String"/>
            <relationship name="tools" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tool" inverseName="tags" inverseEntity="Tool"/>
        </entity>
        """

    /// A legacy-numbered store's join table is named by the old numbers (`Z_3TOOLS` in name
    /// order): an in-place step renames it with the renumbering, and every link stays.
    @Test(arguments: TestEngine.allCases)
    func anInPlaceStepRenamesTheJoinTablesOfAStoreItRenumbers(engine: TestEngine) async throws {
        let v1 = try ModelFixtures.model(Self.taggedTools)
        let (v2, models) = try Self.nextVersion(of: v1, named: "Test", addingColourTo: "Tag")
        let legacy = try legacyNumbering(of: v1)
        let oldJoin = try #require(
            StoreSchema(model: v1, dialect: engine.dialect, numbering: legacy).joinTable(entity: "Tool", relationship: "tags")?.name
        )
        let newJoin = try #require(StoreSchema(model: v2, dialect: engine.dialect).joinTable(entity: "Tool", relationship: "tags")?.name)
        #expect(oldJoin != newJoin)
        try await engine.withStoreURL { url in
            try createStore(at: url, model: v1, numbering: legacy)
            try await withOpenStore(url, model: v1) { container in
                let context = container.newContext()
                var tags: [String: ManagedObject] = [:]
                for label in ["heavy", "iron"] {
                    let tag = try context.insertObject(entityName: "Tag")
                    tag.setValue(.string(label), forKey: "label")
                    tags[label] = tag
                }
                for (name, labels) in [("Hammer", ["heavy", "iron"]), ("Saw", ["iron"])] {
                    let tool = try context.insertObject(entityName: "Tool")
                    tool.setValue(.string(name), forKey: "name")
                    for label in labels { tool.addDestination(tags[label]!, forKey: "tags") }
                }
                try await context.save()
            }
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).migrateStore(at: url)
            // Every row renumbered: PostgreSQL rebuilds the tables rather than rewrite each row
            // (the in-place tests run the renumbering statements themselves on both engines).
            #expect(plan.steps.map(\.strategy) == [engine == .postgres ? .setBased : .inPlace])
            #expect(try await storeRows(url, "SELECT count(*) FROM \(newJoin)") == [[.integer(3)]])
            try await InPlaceFixtures.expectFreshSchema(url, v2)
            try await withOpenStore(url, model: v2) { container in
                let context = container.newContext()
                let tools = try await context.fetch(FetchRequest(entityName: "Tool", sortDescriptors: [FetchRequest.SortDescriptor(key: "name")]))
                var labels: [[String]] = []
                for tool in tools {
                    labels.append(try await tool.destinations(forKey: "tags").compactMap { $0.value(forKey: "label").stringValue }.sorted())
                }
                #expect(labels == [["heavy", "iron"], ["iron"]])
            }
        }
    }

    /// A copy keeps the source's numbering (every `Z_ENT`, `Z_PRIMARYKEY` row and join table
    /// name), from SQLite to PostgreSQL and back, and reads as the source does.
    @Test func aStoreNumberedOtherwiseIsCopiedWithItsNumbersToEitherEngine() async throws {
        let model = try ModelFixtures.model(Self.taggedTools)
        let models = try VersionedModel(name: "Test", versions: [model], currentVersionName: model.name)
        let otherNumbering = try legacyNumbering(of: model)
        let joinTable = try #require(
            StoreSchema(model: model, dialect: .sqlite, numbering: otherNumbering).joinTable(entity: "Tool", relationship: "tags")?.name
        )
        #expect(joinTable != StoreSchema(model: model, dialect: .sqlite).joinTable(entity: "Tool", relationship: "tags")?.name)
        try await TestEngine.sqlite.withStoreURL { source in
            try createStore(at: source, model: model, numbering: otherNumbering)
            try await withOpenStore(source, model: model) { container in
                let context = container.newContext()
                let hammer = try context.insertObject(entityName: "Tool")
                hammer.setValue("Hammer", forKey: "name")
                let tag = try context.insertObject(entityName: "Tag")
                tag.setValue("heavy", forKey: "label")
                hammer.addDestination(tag, forKey: "tags")
                try context.insertObject(entityName: "Gadget").setValue("Radio", forKey: "name")
                try await context.save()
            }
            let queries = [
                "SELECT Z_PK, Z_ENT, ZNAME FROM ZITEM ORDER BY Z_PK", "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT",
                "SELECT * FROM \(joinTable)",
            ]
            var expected: [[[DatabaseValue]]] = []
            for query in queries { expected.append(try await storeRows(source, query)) }
            #expect(expected[2].count == 1)
            try await TestEngine.postgres.withStoreURL { postgres in
                _ = try await StoreCopy.copy(from: source, to: postgres, versions: models, logger: testLogger)
                let back = source.sibling("back")
                _ = try await StoreCopy.copy(from: postgres, to: back, versions: models, logger: testLogger)
                for url in [postgres, back] {
                    for (query, rows) in zip(queries, expected) {
                        #expect(try await storeRows(url, query) == rows, "\(url.testEngine): \(query)")
                    }
                    try await withOpenStore(url, model: model) { container in
                        let context = container.newContext()
                        let tools = try await context.fetch(FetchRequest(entityName: "Tool"))
                        let tags = try await tools.first?.destinations(forKey: "tags") ?? []
                        #expect(tools.map { $0.value(forKey: "name") } == ["Hammer"], "\(url.testEngine)")
                        #expect(tags.map { $0.value(forKey: "label") } == ["heavy"], "\(url.testEngine)")
                    }
                }
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func abstractInsertThrows(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            #expect(throws: ContextError.self) { try context.insertObject(entityName: "Item") }
            #expect(throws: ContextError.self) { try context.insertObject(entityName: "Nonexistent") }
            #expect(!context.hasChanges)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func subEntityAttributesStayTheirOwn(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let tool = try context.insertObject(entityName: "Tool")
            #expect(tool.validateKey("name") && tool.validateKey("weight"))
            #expect(!tool.validateKey("voltage"), "a sibling's attribute is not the tool's")
            tool.setValue(5, forKey: "voltage")
            let error = await #expect(throws: ValidationError.self) { try await context.save() }
            #expect(error?.issues.map(\.code) == [.unknownKey])
            #expect(error?.issues.first?.key == "voltage")
        }
    }
}
