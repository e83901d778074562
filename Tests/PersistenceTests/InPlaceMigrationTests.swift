import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Inferred mappings run as SQL inside a SQLite store: attributes and entities.
///
/// Each test writes a store with the source model through the framework, migrates the
/// closed store in place, then opens it with the destination model and checks the values
/// come back and the schema is the one a fresh store of the destination has. Every test
/// runs on SQLite and on PostgreSQL.
@Suite("In-place migration: attributes and entities")
struct InPlaceMigrationTests {
    typealias F = InPlaceFixtures

    static let items = """
        <entity name="Item" isAbstract="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Tool" parentEntity="Item">
            <attribute name="weight" optional="YES" attributeType="Double"/>
        </entity>
        <entity name="Gadget" parentEntity="Item">
            <attribute name="voltage" optional="YES" attributeType="Integer 32"/>
        </entity>
        """

    @Test(arguments: TestEngine.allCases)
    func addedAttributesStartAtTheirDefaults(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            Self.items + """
                <entity name="Note">
                    <attribute name="text" optional="YES" attributeType="String"/>
                </entity>
                """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Item" isAbstract="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="stock" attributeType="Integer 32" defaultValueString="5"/>
            </entity>
            <entity name="Tool" parentEntity="Item">
                <attribute name="weight" optional="YES" attributeType="Double"/>
                <attribute name="material" optional="YES" attributeType="String" defaultValueString="steel"/>
            </entity>
            <entity name="Gadget" parentEntity="Item">
                <attribute name="voltage" optional="YES" attributeType="Integer 32"/>
            </entity>
            <entity name="Note">
                <attribute name="text" optional="YES" attributeType="String"/>
                <attribute name="created" optional="YES" attributeType="Date" defaultDateTimeInterval="700000000"/>
                <attribute name="rating" optional="YES" attributeType="Decimal" defaultValueString="2.5"/>
                <attribute name="tag" optional="YES" attributeType="String"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for (name, weight) in [("Hammer", 1.5), ("Saw", 0.8)] {
                    let tool = try context.insertObject(entityName: "Tool")
                    tool.setValue(.string(name), forKey: "name")
                    tool.setValue(.double(weight), forKey: "weight")
                }
                let gadget = try context.insertObject(entityName: "Gadget")
                gadget.setValue("Radio", forKey: "name")
                gadget.setValue(12, forKey: "voltage")
                try context.insertObject(entityName: "Note").setValue("remember", forKey: "text")
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            // Existing rows get the default with one UPDATE each; a sub-entity's only its own rows.
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements.contains("ALTER TABLE ZITEM ADD COLUMN ZSTOCK \(sql.type(.integer32))"))
            #expect(sql.statements.contains("UPDATE ZITEM SET ZSTOCK = \(sql.placeholder)"))
            #expect(sql.statements.contains { $0.hasPrefix("UPDATE ZITEM SET ZMATERIAL = \(sql.placeholder) WHERE Z_ENT = ") })
            #expect(!sql.statements.contains { $0.contains("ZTAG =") }, "no UPDATE for an attribute without a default")
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let items = try await F.objects(context, "Item", by: "name")
            #expect(items.map(\.entity.name) == ["Tool", "Gadget", "Tool"])
            #expect(items.map { $0.value(forKey: "name") } == ["Hammer", "Radio", "Saw"])
            #expect(items.map { $0.value(forKey: "stock") } == [5, 5, 5])
            #expect(items[0].value(forKey: "weight") == 1.5 && items[2].value(forKey: "weight") == 0.8)
            #expect(items[1].value(forKey: "voltage") == 12)
            #expect(items[0].value(forKey: "material") == "steel" && items[2].value(forKey: "material") == "steel")
            #expect(try await container.int("SELECT count(*) FROM ZITEM WHERE ZMATERIAL IS NOT NULL") == 2, "the gadget has no material")

            let note = try #require(try await context.fetch(FetchRequest(entityName: "Note")).first)
            #expect(note.value(forKey: "text") == "remember")
            #expect(note.value(forKey: "created") == .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
            #expect(note.value(forKey: "rating") == .decimal(Decimal(string: "2.5")!))
            #expect(note.value(forKey: "tag") == .null)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func removedAndRenamedAttributes(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <attribute name="subtitle" optional="YES" attributeType="String"/>
                <attribute name="isbn" optional="YES" attributeType="String"/>
                <attribute name="first" optional="YES" attributeType="String"/>
                <attribute name="last" optional="YES" attributeType="String"/>
            </entity>
            """
        )
        // `code` continues `isbn`; `first` and `last` swap names, a cycle of renames.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <attribute name="code" optional="YES" attributeType="String" elementID="isbn"/>
                <attribute name="first" optional="YES" attributeType="String" elementID="last"/>
                <attribute name="last" optional="YES" attributeType="String" elementID="first"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for (title, isbn) in [("One", "111"), ("Two", "222")] {
                    let book = try context.insertObject(entityName: "Book")
                    book.setValue(.string(title), forKey: "title")
                    book.setValue("sub", forKey: "subtitle")
                    book.setValue(.string(isbn), forKey: "isbn")
                    book.setValue(.string("F" + title), forKey: "first")
                    book.setValue(.string("L" + title), forKey: "last")
                }
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements.contains("ALTER TABLE ZBOOK DROP COLUMN ZSUBTITLE"))
            #expect(sql.statements.contains("ALTER TABLE ZBOOK RENAME COLUMN ZISBN TO ZCODE"))
            #expect(!sql.statements.contains { $0.hasPrefix("UPDATE") }, "renames move no data")
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let books = try await F.objects(container.newContext(), "Book", by: "title")
            #expect(books.map { $0.value(forKey: "code") } == ["111", "222"])
            #expect(books.map { $0.value(forKey: "first") } == ["LOne", "LTwo"])
            #expect(books.map { $0.value(forKey: "last") } == ["FOne", "FTwo"])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func optionalAttributeBecomesRequiredWithDefault(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Book">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="copies" optional="YES" attributeType="Integer 16"/>
            </entity>
            """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Book">
                <attribute name="title" attributeType="String" defaultValueString="Untitled"/>
                <attribute name="copies" attributeType="Integer 16" defaultValueString="1"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Book").setValue("A", forKey: "title")
                try context.insertObject(entityName: "Book").setValue(3, forKey: "copies")
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements.contains("UPDATE ZBOOK SET ZTITLE = \(sql.placeholder) WHERE ZTITLE IS NULL"))
            #expect(sql.statements.contains("UPDATE ZBOOK SET ZCOPIES = \(sql.placeholder) WHERE ZCOPIES IS NULL"))
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let books = try await F.objects(container.newContext(), "Book", by: "title")
            #expect(books.map { $0.value(forKey: "title") } == ["A", "Untitled"])
            #expect(books.map { $0.value(forKey: "copies") } == [1, 3])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func numericTypeChangesConvertTheStoredValues(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Sample">
                <attribute name="label" optional="YES" attributeType="String"/>
                <attribute name="f" optional="YES" attributeType="Float"/>
                <attribute name="i" optional="YES" attributeType="Integer 16"/>
                <attribute name="d" optional="YES" attributeType="Integer 32"/>
                <attribute name="big" optional="YES" attributeType="Integer 64"/>
                <attribute name="dec" optional="YES" attributeType="Decimal"/>
            </entity>
            """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Sample">
                <attribute name="label" optional="YES" attributeType="String"/>
                <attribute name="f" optional="YES" attributeType="Integer 32"/>
                <attribute name="i" optional="YES" attributeType="Double"/>
                <attribute name="d" optional="YES" attributeType="Decimal"/>
                <attribute name="big" optional="YES" attributeType="Integer 16"/>
                <attribute name="dec" optional="YES" attributeType="Double"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                let full = try context.insertObject(entityName: "Sample")
                full.setValue("full", forKey: "label")
                full.setValue(3.75, forKey: "f")
                full.setValue(7, forKey: "i")
                full.setValue(25, forKey: "d")
                full.setValue(12, forKey: "big")
                full.setValue(.decimal(Decimal(string: "1.5")!), forKey: "dec")
                try context.insertObject(entityName: "Sample").setValue("empty", forKey: "label")
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            let sql = SQLSpelling(migration, engine)
            switch engine {
            case .sqlite:
                #expect(sql.statements.contains("UPDATE ZSAMPLE SET ZF_MIGRATING = CAST(ZF AS INTEGER)"))
                #expect(!sql.statements.contains { $0.contains("ZBIG") }, "Integer 64 → 16 keeps its storage class")
            case .postgres:
                // A cast to an integer type rounds on PostgreSQL: the fraction goes first, as on SQLite.
                #expect(sql.statements.contains("UPDATE ZSAMPLE SET ZF_MIGRATING = CAST(TRUNC(ZF) AS INTEGER)"))
                #expect(sql.statements.contains("UPDATE ZSAMPLE SET ZBIG_MIGRATING = CAST(ZBIG AS SMALLINT)"))
            }
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let samples = try await F.objects(container.newContext(), "Sample", by: "label")
            let (empty, full) = (samples[0], samples[1])
            #expect(full.value(forKey: "f") == 3)
            #expect(full.value(forKey: "i") == 7.0)
            #expect(full.value(forKey: "d") == .decimal(Decimal(string: "25")!))
            #expect(full.value(forKey: "big") == 12)
            #expect(full.value(forKey: "dec") == 1.5)
            for key in ["f", "i", "d", "big", "dec"] {
                #expect(empty.value(forKey: key) == .null)
            }
            if engine == .sqlite {
                // SQLite's storage classes (PostgreSQL's column types are the fresh schema's, checked above).
                let types = try await container.sql("SELECT typeof(ZF), typeof(ZI), typeof(ZD), typeof(ZDEC) FROM ZSAMPLE WHERE ZLABEL = 'full'")
                #expect(types.first?.values.compactMap(\.text) == ["integer", "real", "text", "real"])
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func renamedEntityIsRenumbered(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Author">
                <attribute name="name" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            </entity>
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            </entity>
            """
        )
        // Writer sorts after Book: Z_ENT 1 ↔ 2 swap.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Writer" elementID="Author">
                <attribute name="name" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            </entity>
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Writer" inverseName="books" inverseEntity="Writer"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                let ann = try context.insertObject(entityName: "Author")
                ann.setValue("Ann", forKey: "name")
                for title in ["A", "B", "C"] {
                    let book = try context.insertObject(entityName: "Book")
                    book.setValue(.string(title), forKey: "title")
                    if title != "C" { book.setDestination(ann, forKey: "author") }
                }
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements.contains("ALTER TABLE ZAUTHOR RENAME TO ZWRITER"))
            #expect(sql.statements.contains("UPDATE ZWRITER SET Z_ENT = 2 WHERE Z_ENT = 1"))
            #expect(sql.statements.contains("UPDATE ZBOOK SET Z_ENT = 1 WHERE Z_ENT = 2"))
            #expect(!sql.statements.contains { $0.contains("CREATE INDEX") || $0.contains("DROP INDEX") }, "ZBOOK_ZAUTHOR_INDEX keeps its name")
            if engine == .postgres {
                #expect(
                    sql.statements.contains("ALTER INDEX IF EXISTS ZAUTHOR_PKEY RENAME TO ZWRITER_PKEY"),
                    "the primary key's index follows the table"
                )
            }
            try await F.expectFreshSchema(url, v2)
            let snapshot = try await SchemaSnapshot(url)
            #expect(snapshot.maxima == ["Book": 3, "Writer": 1], "key counters carried to the new entity numbers")

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let writer = try #require(try await context.fetch(FetchRequest(entityName: "Writer")).first)
            #expect(writer.value(forKey: "name") == "Ann")
            #expect(titles(try await writer.destinations(forKey: "books")).sorted() == ["A", "B"])
            let books = try await F.objects(context, "Book", by: "title")
            #expect(try await books[0].destination(forKey: "author") === writer)
            #expect(try await books[2].destination(forKey: "author") == nil)
            // New objects get keys above the carried counters.
            let book = try context.insertObject(entityName: "Book")
            book.setValue("D", forKey: "title")
            try await context.save()
            #expect(book.objectID.primaryKey == 4)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func entitiesAddedAndRemoved(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Item" isAbstract="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>
            </entity>
            <entity name="Tool" parentEntity="Item">
                <attribute name="weight" optional="YES" attributeType="Double"/>
            </entity>
            <entity name="Gadget" parentEntity="Item">
                <attribute name="voltage" optional="YES" attributeType="Integer 32"/>
            </entity>
            <entity name="Shelf">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="shelf" inverseEntity="Item"/>
                <relationship name="favorite" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Item"/>
            </entity>
            <entity name="Note">
                <attribute name="text" optional="YES" attributeType="String"/>
            </entity>
            """
        )
        // Gadget and Note go; Widget joins the Item hierarchy; Tag is a new table.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Item" isAbstract="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>
            </entity>
            <entity name="Tool" parentEntity="Item">
                <attribute name="weight" optional="YES" attributeType="Double"/>
            </entity>
            <entity name="Widget" parentEntity="Item">
                <attribute name="color" optional="YES" attributeType="String" defaultValueString="red"/>
            </entity>
            <entity name="Shelf">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="shelf" inverseEntity="Item"/>
                <relationship name="favorite" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Item"/>
            </entity>
            <entity name="Tag">
                <attribute name="label" optional="YES" attributeType="String"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                let hammer = try context.insertObject(entityName: "Tool")
                hammer.setValue("Hammer", forKey: "name")
                let radio = try context.insertObject(entityName: "Gadget")
                radio.setValue("Radio", forKey: "name")
                let big = try context.insertObject(entityName: "Shelf")
                big.setValue("big", forKey: "label")
                hammer.setDestination(big, forKey: "shelf")
                radio.setDestination(big, forKey: "shelf")
                big.setDestination(radio, forKey: "favorite")
                let small = try context.insertObject(entityName: "Shelf")
                small.setValue("small", forKey: "label")
                small.setDestination(hammer, forKey: "favorite")
                try context.insertObject(entityName: "Note").setValue("gone", forKey: "text")
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            // Numbered as Core Data numbers them, by inheritance tree: Item 1, Gadget 2, Tool 3 …
            let (from, to) = (EntityNumbering.coreData(v1), EntityNumbering.coreData(v2))
            let gadget = try #require(from.number(of: "Gadget"))
            // References to the gadget's rows are cleared before they are deleted.
            let sql = SQLSpelling(migration, engine)
            #expect(sql.statements.contains("UPDATE ZSHELF SET ZFAVORITE = NULL WHERE ZFAVORITE IN (SELECT Z_PK FROM ZITEM WHERE Z_ENT = \(gadget))"))
            #expect(sql.statements.contains("DELETE FROM ZITEM WHERE Z_ENT = \(gadget)"))
            #expect(sql.statements.contains("ALTER TABLE ZITEM DROP COLUMN ZVOLTAGE"))
            #expect(sql.statements.contains("DROP TABLE ZNOTE"))
            #expect(sql.statements.contains { $0.hasPrefix("CREATE TABLE ZTAG") })
            #expect(sql.statements.contains("ALTER TABLE ZITEM ADD COLUMN ZCOLOR \(sql.type(.string))"))
            // The rows left in ZITEM take their entities' new numbers (Tool 3 → 2).
            let (toolBefore, toolAfter) = (try #require(from.number(of: "Tool")), try #require(to.number(of: "Tool")))
            #expect(toolBefore != toolAfter)
            #expect(
                sql.statements.contains { $0.hasPrefix("UPDATE ZITEM SET Z_ENT") && $0.contains("\(toolBefore)") && $0.contains("\(toolAfter)") },
                "\(sql.statements)"
            )
            #expect(try await storeRows(url, "SELECT DISTINCT Z_ENT FROM ZITEM") == [[.integer(Int64(toolAfter))]])
            try await F.expectFreshSchema(url, v2)
            let snapshot = try await SchemaSnapshot(url)
            // Keys are counted on the root's row (Item); a sub-entity's stays 0, as in Apple's stores.
            #expect(snapshot.maxima == ["Item": 2, "Shelf": 2, "Tag": 0, "Tool": 0, "Widget": 0])

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let items = try await context.fetch(FetchRequest(entityName: "Item"))
            #expect(items.map(\.entity.name) == ["Tool"])
            let shelves = try await F.objects(context, "Shelf", by: "label")
            #expect(titles(try await shelves[0].destinations(forKey: "items"), key: "name") == ["Hammer"])
            #expect(try await shelves[0].destination(forKey: "favorite") == nil, "the gadget is gone")
            #expect(try await shelves[1].destination(forKey: "favorite") === items[0])
            #expect(try await context.count(for: FetchRequest(entityName: "Tag")) == 0)
            // The new sub-entity's rows draw keys from the hierarchy's counter.
            let widget = try context.insertObject(entityName: "Widget")
            try await context.save()
            #expect(widget.objectID.primaryKey == 3)
            #expect(try await container.newContext().existingObject(with: widget.objectID).value(forKey: "color") == "red")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func attributeMovedUpTheHierarchyIsComputedPerEntity(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Item" isAbstract="YES"/>
            <entity name="Tool" parentEntity="Item">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="weight" optional="YES" attributeType="Double"/>
            </entity>
            <entity name="Gadget" parentEntity="Item">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="voltage" optional="YES" attributeType="Integer 32"/>
            </entity>
            """
        )
        let v2 = try F.model("V2", Self.items)
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Tool").setValue("Hammer", forKey: "name")
                try context.insertObject(entityName: "Gadget").setValue("Radio", forKey: "name")
                try await context.save()
            }
            // Each sub-entity had its own column (ZNAME, ZNAME1); the parent's attribute has one.
            let migration = try await F.migrate(url, from: v1, to: v2)
            let (gadget, tool) = (EntityNumbering.coreData(v1).number(of: "Gadget") ?? 0, EntityNumbering.coreData(v1).number(of: "Tool") ?? 0)
            #expect(
                SQLSpelling(migration, engine).statements.contains {
                    $0.contains("CASE WHEN Z_ENT = \(gadget) THEN ZNAME WHEN Z_ENT = \(tool) THEN ZNAME1 END")
                }
            )
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let items = try await F.objects(container.newContext(), "Item", by: "name")
            #expect(items.map(\.entity.name) == ["Tool", "Gadget"])
            #expect(titles(items, key: "name") == ["Hammer", "Radio"])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func newSubEntityAddsColumnsToItsRootTable(engine: TestEngine) async throws {
        let v1 = try F.model("V1", #"<entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"#)
        let v2 = try F.model(
            "V2",
            """
            <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>
            <entity name="EBook" parentEntity="Book"><attribute name="format" attributeType="String" defaultValueString="epub"/></entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for title in ["A", "B"] { try context.insertObject(entityName: "Book").setValue(.string(title), forKey: "title") }
                try await context.save()
            }
            let migration = try await F.migrate(url, from: v1, to: v2)
            // The table now holds two entities, so it gets its Z_ENT index; no row is an e-book yet.
            let sql = SQLSpelling(migration, engine)
            #expect(
                sql.statements == [
                    "ALTER TABLE ZBOOK ADD COLUMN ZFORMAT \(sql.type(.string))",
                    "CREATE INDEX ZBOOK_Z_ENT_INDEX ON ZBOOK (Z_ENT)",
                ]
            )
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let ebook = try context.insertObject(entityName: "EBook")
            ebook.setValue("C", forKey: "title")
            try await context.save()
            #expect(ebook.objectID.primaryKey == 3, "keys continue from the root's counter")
            let books = try await F.objects(container.newContext(), "Book", by: "title")
            #expect(books.map(\.entity.name) == ["Book", "Book", "EBook"])
            #expect(books[2].value(forKey: "format") == "epub")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func entitiesSwappingNamesSwapTables(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Alpha"><attribute name="first" optional="YES" attributeType="String"/></entity>
            <entity name="Beta"><attribute name="second" optional="YES" attributeType="Integer 32"/></entity>
            """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Alpha" elementID="Beta"><attribute name="second" optional="YES" attributeType="Integer 32"/></entity>
            <entity name="Beta" elementID="Alpha"><attribute name="first" optional="YES" attributeType="String"/></entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Alpha").setValue("a", forKey: "first")
                for number in [1, 2] { try context.insertObject(entityName: "Beta").setValue(.integer(Int64(number)), forKey: "second") }
                try await context.save()
            }
            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains {
                    $0.contains("RENAME TO ZALPHA_MIGRATING") || $0.contains("RENAME TO ZBETA_MIGRATING")
                }
            )
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            #expect(try await F.objects(context, "Alpha", by: "second").map { $0.value(forKey: "second") } == [1, 2])
            #expect(titles(try await context.fetch(FetchRequest(entityName: "Beta")), key: "first") == ["a"])
            #expect(try await SchemaSnapshot(url).maxima == ["Alpha": 2, "Beta": 1])
        }
    }
}
