import Foundation
import PersistenceTesting
import Testing

@_spi(Testing) @testable import Persistence

/// Each rule of `docs/INFERENCE.md`: a change between two versions, rows written at the
/// first, and what an inferred step gives back at the second, through every kind of step the
/// plan can choose (in place, set-based, streamed) on both engines.
@Suite("What a lightweight migration infers")
struct InferenceRulesTests {
    /// One attribute change of `Item`, whose `label` names each row.
    struct AttributeRule: Sendable, CustomTestStringConvertible {
        let name: String
        /// The `value` attribute at versions 1 and 2.
        let before: String
        let after: String
        /// Label → value written at version 1, and the value read at version 2.
        let rows: [(label: String, written: AttributeValue, read: AttributeValue)]
        var testDescription: String { name }
    }

    static let attributeRules: [AttributeRule] = [
        AttributeRule(
            name: "Boolean becomes Integer 32",
            before: #"<attribute name="value" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>"#,
            after: #"<attribute name="value" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>"#,
            rows: [("ja", .bool(true), .integer(1)), ("nein", .bool(false), .integer(0)), ("weiß nicht", .null, .null)]
        ),
        AttributeRule(
            name: "Integer 32 becomes Boolean",
            before: #"<attribute name="value" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>"#,
            after: #"<attribute name="value" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>"#,
            rows: [
                ("null", .integer(0), .bool(false)), ("eins", .integer(1), .bool(true)), ("sieben", .integer(7), .bool(true)),
                ("minus drei", .integer(-3), .bool(true)), ("leer", .null, .null),
            ]
        ),
        AttributeRule(
            name: "Integer 16 becomes Double",
            before: #"<attribute name="value" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>"#,
            after: #"<attribute name="value" optional="YES" attributeType="Double" usesScalarValueType="YES"/>"#,
            rows: [("Cent", .integer(1_299), .double(1_299)), ("leer", .null, .null), ("negativ", .integer(-45), .double(-45))]
        ),
        AttributeRule(
            name: "optional becomes required with no default, every row has a value",
            before: #"<attribute name="value" optional="YES" attributeType="String"/>"#,
            after: #"<attribute name="value" attributeType="String"/>"#,
            rows: [("a", .string("Grüße"), .string("Grüße")), ("b", .string(""), .string(""))]
        ),
        AttributeRule(
            name: "optional becomes required with a default",
            before: #"<attribute name="value" optional="YES" attributeType="String"/>"#,
            after: #"<attribute name="value" attributeType="String" defaultValueString="unbekannt"/>"#,
            rows: [("a", .string("Grüße"), .string("Grüße")), ("b", .null, .string("unbekannt"))]
        ),
        AttributeRule(
            name: "required becomes optional",
            before: #"<attribute name="value" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>"#,
            after: #"<attribute name="value" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#,
            rows: [("a", .integer(9_000_000_000), .integer(9_000_000_000)), ("b", .integer(0), .integer(0))]
        ),
        AttributeRule(
            name: "renamed by its renaming identifier",
            before: #"<attribute name="old" optional="YES" attributeType="String"/>"#,
            after: #"<attribute name="value" optional="YES" attributeType="String" elementID="old"/>"#,
            rows: [("a", .string("Ünïcode ☾"), .string("Ünïcode ☾")), ("b", .null, .null)]
        ),
    ]

    static let strategies: [MigrationPlan.Strategy] = [.inPlace, .setBased, .streamed]

    static func model(_ version: Int, value: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Item" representedClassName="Item">
                    <attribute name="label" optional="YES" attributeType="String"/>
                    \(value)
                </entity>
                """
            ),
            name: "Rules \(version)",
            file: ModelFixtures.file
        )
    }

    /// The key the rule's rows are written under at version 1.
    static func writtenKey(_ rule: AttributeRule) -> String { rule.before.contains(#"name="old""#) ? "old" : "value" }

    @Test(arguments: attributeRules, TestEngine.allCases.flatMap { engine in strategies.map { (engine, $0) } })
    func attributeChange(rule: AttributeRule, kind: (engine: TestEngine, strategy: MigrationPlan.Strategy)) async throws {
        let v1 = try Self.model(1, value: rule.before)
        let v2 = try Self.model(2, value: rule.after)
        let models = try VersionedModel(name: "Rules", versions: [v1, v2], currentVersionName: "Rules 2")
        try await kind.engine.withStoreURL { url in
            try await withOpenStore(url, model: v1, options: .createIfMissing) { container in
                let context = container.newContext()
                for row in rule.rows {
                    let item = try context.insertObject(entityName: "Item")
                    item.setValue(.string(row.label), forKey: "label")
                    item.setValue(row.written, forKey: Self.writtenKey(rule))
                }
                try await context.save()
            }
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: kind.strategy)
            let plan = try await migrator.migrateStore(at: url)
            #expect(plan.steps.map(\.strategy) == [kind.strategy])
            try await withOpenStore(url, model: v2) { container in
                let items = try await container.newContext().fetch(FetchRequest(entityName: "Item"))
                let read = Dictionary(uniqueKeysWithValues: items.map { ($0.value(forKey: "label").stringValue ?? "-", $0.value(forKey: "value")) })
                #expect(read == Dictionary(uniqueKeysWithValues: rule.rows.map { ($0.label, $0.read) }))
            }
        }
    }

    /// An attribute that becomes required with no default is inferred as Core Data infers
    /// it; a row without a value fails the step, naming it, and the store stays as it was.
    @Test(arguments: TestEngine.allCases.flatMap { engine in strategies.map { (engine, $0) } })
    func becomingRequiredFailsOnARowWithoutAValue(engine: TestEngine, strategy: MigrationPlan.Strategy) async throws {
        let v1 = try Self.model(1, value: #"<attribute name="value" optional="YES" attributeType="String"/>"#)
        let v2 = try Self.model(2, value: #"<attribute name="value" attributeType="String"/>"#)
        let models = try VersionedModel(name: "Rules", versions: [v1, v2], currentVersionName: "Rules 2")
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: v1, options: .createIfMissing) { container in
                let context = container.newContext()
                for (label, value) in [("a", "Grüße"), ("ohne", nil), ("c", "Ende")] {
                    let item = try context.insertObject(entityName: "Item")
                    item.setValue(.string(label), forKey: "label")
                    item.setValue(value.map(AttributeValue.string) ?? .null, forKey: "value")
                }
                try await context.save()
            }
            let before = try await storeRows(url, "SELECT ZLABEL, ZVALUE FROM ZITEM ORDER BY Z_PK")
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: strategy)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(error?.code == .validationFailed)
            #expect(error?.description.contains("value") == true, "\(String(describing: error))")
            #expect(try await migrator.plan(forStoreAt: url).storeVersion.name == "Rules 1")
            #expect(try await storeRows(url, "SELECT ZLABEL, ZVALUE FROM ZITEM ORDER BY Z_PK") == before)
        }
    }

    // MARK: Relationships

    /// Shelves and their books, `Book.shelf` ↔ `Shelf.books` as each version has them.
    static func shelves(_ version: Int, shelf: String, books: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Shelf" representedClassName="Shelf">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    \(books)
                </entity>
                <entity name="Book" representedClassName="Book">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    \(shelf)
                </entity>
                """
            ),
            name: "Shelves \(version)",
            file: ModelFixtures.file
        )
    }

    static let optionalShelf =
        #"<relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>"#
    static let requiredShelf =
        #"<relationship name="shelf" minCount="1" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>"#
    static let books =
        #"<relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>"#
    static let orderedBooks =
        #"<relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>"#

    /// Shelf name → its books' titles in the order added (unlike key order: added last first).
    static let shelving: [(shelf: String, books: [String])] = [("Küche", ["Kochbuch ☕", "Brot"]), ("Flur", ["Atlas", "Straßen", "Zeitung"])]

    /// Writes the shelves, each book added to its shelf in `shelving`'s order, books
    /// inserted in reverse so key order differs; `withoutShelf` adds a book on no shelf.
    static func writeShelves(_ url: StoreURL, model: ManagedObjectModel, withoutShelf: Bool = false) async throws {
        try await withOpenStore(url, model: model, options: .createIfMissing) { container in
            let context = container.newContext()
            var books: [String: ManagedObject] = [:]
            for title in shelving.flatMap(\.books).reversed() {
                books[title] = try context.insertObject(entityName: "Book")
                books[title]?.setValue(.string(title), forKey: "title")
            }
            try await context.save()
            for (name, titles) in shelving {
                let shelf = try context.insertObject(entityName: "Shelf")
                shelf.setValue(.string(name), forKey: "name")
                for title in titles { shelf.addDestination(try #require(books[title]), forKey: "books") }
                try await context.save()
            }
            if withoutShelf {
                try context.insertObject(entityName: "Book").setValue(.string("verlegt"), forKey: "title")
                try await context.save()
            }
        }
    }

    /// Shelf name → its books' titles as read at `model`, sorted unless the relationship is ordered.
    static func readShelves(_ url: StoreURL, model: ManagedObjectModel) async throws -> [String: [String]] {
        try await withOpenStore(url, model: model) { container in
            var result: [String: [String]] = [:]
            let context = container.newContext()
            for shelf in try await context.fetch(FetchRequest(entityName: "Shelf")) {
                let titles = try await shelf.destinations(forKey: "books").map { $0.value(forKey: "title").stringValue ?? "-" }
                let ordered = model.relationship(named: "books", of: shelf.entity)?.isOrdered == true
                result[shelf.value(forKey: "name").stringValue ?? "-"] = ordered ? titles : titles.sorted()
            }
            return result
        }
    }

    static let relationshipRules: [(name: String, before: (shelf: String, books: String), after: (shelf: String, books: String))] = [
        ("a to-one becomes required, every row has one", (optionalShelf, books), (requiredShelf, books)),
        ("a to-many becomes ordered", (optionalShelf, books), (optionalShelf, orderedBooks)),
        ("an ordered to-many becomes unordered", (optionalShelf, orderedBooks), (optionalShelf, books)),
        (
            "an ordered to-many stays ordered", (optionalShelf, orderedBooks),
            (optionalShelf, orderedBooks.replacingOccurrences(of: "Nullify", with: "Cascade"))
        ),
    ]

    @Test(arguments: relationshipRules.indices, TestEngine.allCases.flatMap { engine in strategies.map { (engine, $0) } })
    func relationshipChange(rule index: Int, kind: (engine: TestEngine, strategy: MigrationPlan.Strategy)) async throws {
        let rule = Self.relationshipRules[index]
        let v1 = try Self.shelves(1, shelf: rule.before.shelf, books: rule.before.books)
        let v2 = try Self.shelves(2, shelf: rule.after.shelf, books: rule.after.books)
        let models = try VersionedModel(name: "Shelves", versions: [v1, v2], currentVersionName: "Shelves 2")
        try await kind.engine.withStoreURL { url in
            try await Self.writeShelves(url, model: v1)
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: kind.strategy)
            let plan = try await migrator.migrateStore(at: url)
            #expect(plan.steps.map(\.strategy) == [kind.strategy], "\(rule.name)")
            let ordered = v2.relationship(named: "books", of: try #require(v2.entity(named: "Shelf")))?.isOrdered == true
            let orderedBefore = v1.relationship(named: "books", of: try #require(v1.entity(named: "Shelf")))?.isOrdered == true
            // An order comes through where there was one; a relationship that becomes ordered
            // starts in key order (the books were inserted last first).
            let expected = Dictionary(
                uniqueKeysWithValues: Self.shelving.map { shelf in
                    (shelf.shelf, !ordered ? shelf.books.sorted() : orderedBefore ? shelf.books : shelf.books.reversed())
                }
            )
            let read = try await Self.readShelves(url, model: v2)
            #expect(read == expected, "\(rule.name): \(read)")
        }
    }

    /// A to-one that becomes required is inferred as Core Data infers it; a row without one
    /// fails the step and the store stays as it was.
    @Test(arguments: TestEngine.allCases.flatMap { engine in strategies.map { (engine, $0) } })
    func aToOneBecomingRequiredFailsOnARowWithoutOne(engine: TestEngine, strategy: MigrationPlan.Strategy) async throws {
        let v1 = try Self.shelves(1, shelf: Self.optionalShelf, books: Self.books)
        let v2 = try Self.shelves(2, shelf: Self.requiredShelf, books: Self.books)
        let models = try VersionedModel(name: "Shelves", versions: [v1, v2], currentVersionName: "Shelves 2")
        try await engine.withStoreURL { url in
            try await Self.writeShelves(url, model: v1, withoutShelf: true)
            let before = try await storeRows(url, "SELECT ZTITLE, ZSHELF FROM ZBOOK ORDER BY Z_PK")
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: strategy)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(error?.code == .validationFailed)
            #expect(error?.description.contains("shelf") == true, "\(String(describing: error))")
            #expect(try await migrator.plan(forStoreAt: url).storeVersion.name == "Shelves 1")
            #expect(try await storeRows(url, "SELECT ZTITLE, ZSHELF FROM ZBOOK ORDER BY Z_PK") == before)
        }
    }

    /// Two streamed steps that would run as one fused pass keep an ordered one-to-many in
    /// its order: the ordered side sets its order one instance at a time, so they run one
    /// after the other.
    @Test(arguments: TestEngine.allCases)
    func anOrderedOneToManyThroughTwoStreamedSteps(engine: TestEngine) async throws {
        let v1 = try Self.shelves(1, shelf: Self.optionalShelf, books: Self.orderedBooks)
        let v2 = try Self.shelves(
            2,
            shelf: Self.optionalShelf,
            books: Self.orderedBooks + #"<attribute name="room" optional="YES" attributeType="String"/>"#
        )
        let v3 = try Self.shelves(
            3,
            shelf: Self.optionalShelf,
            books: Self.orderedBooks
                + #"<attribute name="room" optional="YES" attributeType="String"/><attribute name="floor" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>"#
        )
        let models = try VersionedModel(name: "Shelves", versions: [v1, v2, v3], currentVersionName: "Shelves 3")
        try await engine.withStoreURL { url in
            try await Self.writeShelves(url, model: v1)
            let plan = try await ProgressiveMigrator(chain: try MigrationChain(ShelvesVersion.self, models: models), batchSize: 2, logger: testLogger)
                .migrateStore(at: url)
            #expect(plan.steps.map(\.strategy) == [.streamed, .streamed])
            #expect(
                plan.steps[0].fusionWithNext?.description.contains("books is ordered") == true,
                "\(String(describing: plan.steps[0].fusionWithNext))"
            )
            #expect(try await Self.readShelves(url, model: v3) == Dictionary(uniqueKeysWithValues: Self.shelving.map { ($0.shelf, $0.books) }))
        }
    }

    // MARK: Entities

    /// Books and magazines, separate entities at version 1, sub-entities of a new
    /// `Publication` at version 2 (its `title` moved up to it).
    static func publications(_ version: Int) throws -> ManagedObjectModel {
        let body =
            version == 1
            ? """
            <entity name="Book" representedClassName="Book">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="pages" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
            </entity>
            <entity name="Magazine" representedClassName="Magazine">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="issue" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            </entity>
            """
            : """
            <entity name="Publication" representedClassName="Publication" isAbstract="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Book" representedClassName="Book" parentEntity="Publication">
                <attribute name="pages" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
            </entity>
            <entity name="Magazine" representedClassName="Magazine" parentEntity="Publication">
                <attribute name="issue" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            </entity>
            """
        return try ManagedObjectModel(xml: ModelFixtures.xml(body), name: "Publications \(version)", file: ModelFixtures.file)
    }

    /// Entities that get a common parent keep their rows, each still of its own entity, and
    /// the parent finds them all.
    @Test(arguments: TestEngine.allCases.flatMap { engine in strategies.map { (engine, $0) } })
    func entitiesGetAParent(engine: TestEngine, strategy: MigrationPlan.Strategy) async throws {
        let v1 = try Self.publications(1)
        let v2 = try Self.publications(2)
        let models = try VersionedModel(name: "Publications", versions: [v1, v2], currentVersionName: "Publications 2")
        let books: [(String?, Int64)] = [("Der Zauberberg", 1_008), (nil, 12)]
        let magazines: [(String?, Int64)] = [("Die Zeit №1", 1), ("Ästhetik", 7)]
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: v1, options: .createIfMissing) { container in
                let context = container.newContext()
                for (entity, key, rows) in [("Book", "pages", books), ("Magazine", "issue", magazines)] {
                    for (title, number) in rows {
                        let object = try context.insertObject(entityName: entity)
                        object.setValue(title.map(AttributeValue.string) ?? .null, forKey: "title")
                        object.setValue(.integer(number), forKey: key)
                    }
                }
                try await context.save()
            }
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: strategy).migrateStore(
                at: url
            )
            // In place cannot move rows between tables: the plan says so and rebuilds.
            #expect(plan.steps.count == 1)
            if strategy != .inPlace { #expect(plan.steps.map(\.strategy) == [strategy]) }
            try await withOpenStore(url, model: v2) { container in
                let context = container.newContext()
                let all = try await context.fetch(FetchRequest(entityName: "Publication"))
                let found = all.map { object in
                    let number = object.value(forKey: object.entity.name == "Book" ? "pages" : "issue").integerValue ?? -1
                    return "\(object.entity.name)|\(object.value(forKey: "title").stringValue ?? "∅")|\(number)"
                }
                let written = books.map { "Book|\($0.0 ?? "∅")|\($0.1)" } + magazines.map { "Magazine|\($0.0 ?? "∅")|\($0.1)" }
                #expect(found.sorted() == written.sorted())
            }
        }
    }
}

/// Both steps through a custom manager that reads only what it is given, so they fuse.
enum ShelvesVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shelves 1"
    case v2 = "Shelves 2"
    case v3 = "Shelves 3"
    var modelName: String { rawValue }
    func nextVersion() -> ShelvesVersion? { self == .v1 ? .v2 : self == .v2 ? .v3 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v1 ? MigrationManager.self : SelfContainedStreamingManager.self }
}
