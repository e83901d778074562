import Foundation
import PersistenceTesting
import Testing

@_spi(Testing) @testable import Persistence

/// Migrations back to an older version: which steps forward have an inverse to infer, and
/// what the inverse gives back on both engines.
@Suite("Steps back")
struct StepBackTests {
    /// Shelves and books over three versions: `Shelf` renamed to `Case` and then `Cabinet`,
    /// whose renaming identifier is `lastIdentifier`: the first name (as Xcode users often
    /// leave it) or the one before; `Book.shelf` renamed to `holder`; version 2 adds `Book.isbn`.
    static func model(_ version: Int, lastIdentifier: String = "Shelf") throws -> ManagedObjectModel {
        let shelf = ["Shelf", "Case", "Cabinet"][version - 1]
        let identifier = version == 1 ? "" : #" elementID="\#(version == 3 ? lastIdentifier : "Shelf")""#
        let link = version == 1 ? "shelf" : "holder"
        let linkIdentifier = version == 1 ? "" : #" elementID="shelf""#
        let isbn = version >= 2 ? #"<attribute name="isbn" optional="YES" attributeType="String"/>"# : ""
        return try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="\(shelf)" representedClassName="\(shelf)"\(identifier)>
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="\(link)" inverseEntity="Book"/>
                </entity>
                <entity name="Book" representedClassName="Book">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <attribute name="price" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                    \(isbn)
                    <relationship name="\(link)" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="\(shelf)" inverseName="books" inverseEntity="\(shelf)"\(linkIdentifier)/>
                </entity>
                """
            ),
            name: "Shelves \(version)",
            file: ModelFixtures.file
        )
    }

    static func models(lastIdentifier: String = "Shelf") throws -> VersionedModel {
        try VersionedModel(
            name: "Shelves",
            versions: [model(1), model(2), model(3, lastIdentifier: lastIdentifier)],
            currentVersionName: "Shelves 3"
        )
    }

    /// Shelf name → its books' titles in the order added (not key order: the books are
    /// inserted last first), and the ISBNs written (one book without).
    static let shelving: [(shelf: String, books: [String])] = [("Küche", ["Kochbuch ☕", "Brot"]), ("Flur", ["Atlas", "Straßen", "Zeitung"])]
    static let isbns: [String: String] = ["Kochbuch ☕": "978-3-16-148410-0", "Atlas": "978-0-00-000000-2", "Zeitung": "979-1-00-000000-9"]

    static func write(_ url: StoreURL, model: ManagedObjectModel) async throws {
        let shelfEntity = model.entities.first { $0.name != "Book" }!.name
        try await withOpenStore(url, model: model, options: .createIfMissing) { container in
            let context = container.newContext()
            var books: [String: ManagedObject] = [:]
            for (index, title) in shelving.flatMap(\.books).reversed().enumerated() {
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string(title), forKey: "title")
                book.setValue(.double(Double(index) + 0.99), forKey: "price")
                book.setValue(isbns[title].map(AttributeValue.string) ?? .null, forKey: "isbn")
                books[title] = book
            }
            try await context.save()
            for (name, titles) in shelving {
                let shelf = try context.insertObject(entityName: shelfEntity)
                shelf.setValue(.string(name), forKey: "name")
                for title in titles { shelf.addDestination(try #require(books[title]), forKey: "books") }
                try await context.save()
            }
        }
    }

    /// Shelf name → its books' titles, in the relationship's order.
    static func read(_ url: StoreURL, model: ManagedObjectModel) async throws -> [String: [String]] {
        let shelfEntity = model.entities.first { $0.name != "Book" }!.name
        return try await withOpenStore(url, model: model) { container in
            var result: [String: [String]] = [:]
            let context = container.newContext()
            for shelf in try await context.fetch(FetchRequest(entityName: shelfEntity)) {
                result[shelf.value(forKey: "name").stringValue ?? "-"] = try await shelf.destinations(forKey: "books").map {
                    $0.value(forKey: "title").stringValue ?? "-"
                }
            }
            return result
        }
    }

    /// Back from 3 to 1 through two renames, the last one's identifier naming the first
    /// version's name or the one before (which Core Data pairs only step by step): refused
    /// until the ISBNs' loss is accepted (counted), then every shelf holds its books in
    /// their order, at version 1 and forward again at version 3.
    @Test(arguments: TestEngine.allCases, ["Shelf", "Case"])
    func backThroughRenamesKeepsEveryShelfAndItsOrder(engine: TestEngine, lastIdentifier: String) async throws {
        let models = try Self.models(lastIdentifier: lastIdentifier)
        let (v1, v3) = (try #require(models.version(named: "Shelves 1")), try #require(models.version(named: "Shelves 3")))
        try await engine.withStoreURL { url in
            try await Self.write(url, model: v3)
            let written = Dictionary(uniqueKeysWithValues: Self.shelving.map { ($0.shelf, $0.books) })
            let migrator = ProgressiveMigrator(chain: try MigrationChain(DeclaredVersion.self, models: models), logger: testLogger)
            let before = try await StoreSnapshot(url)
            let refused = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url, to: "Shelves 1") }
            #expect(refused?.code == .dataLossNotAccepted)
            #expect(refused?.message.contains("Book.isbn is not carried") == true, "\(String(describing: refused))")
            // The ISBNs go in the second step; the first carries them as they are, so they are counted on the store.
            #expect(
                refused?.message.contains(
                    "step 2/2 Shelves 2 → Shelves 1: Book.isbn is not carried: no property mapping of BookToBook reads it — \(Self.isbns.count) rows have a value"
                ) == true,
                "\(String(describing: refused))"
            )
            if lastIdentifier == "Shelf" {
                // Core Data's way, one step straight back (the identifiers pair 3 with 1): the ISBNs counted.
                let straight = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger)
                let counted = await #expect(throws: MigrationError.self) { try await straight.migrateStore(at: url, to: "Shelves 1") }
                #expect(counted?.message.contains("Book.isbn is not carried") == true, "\(String(describing: counted))")
                #expect(counted?.message.contains("— \(Self.isbns.count) rows have a value") == true, "\(String(describing: counted))")
            }
            try await expectUnchanged(url, since: before)

            let plan = try await migrator.migrateStore(at: url, to: "Shelves 1", acceptingDataLoss: true)
            #expect(plan.goesBack && plan.steps.allSatisfy { $0.mappingModels.allSatisfy(\.isInferred) })
            #expect(try await Self.read(url, model: v1) == written)
            #expect(try await PersistentStore.layoutDifferences(at: url, model: v1).differences.isEmpty)

            try await migrator.migrateStore(at: url, to: "Shelves 3")
            #expect(try await Self.read(url, model: v3) == written)
        }
    }

    /// A step forward run by a mapping model whose expression converts a value it carries:
    /// the inverse is unknown, and the step back is refused naming the expression.
    @Test func aConvertedValueHasNoInverse() throws {
        let models = try Self.models()
        let (v1, v2) = (try #require(models.version(named: "Shelves 1")), try #require(models.version(named: "Shelves 2")))
        var forward = try MappingModel.inferred(from: v1, to: v2)
        let index = try #require(forward.entityMappings.firstIndex { $0.destinationEntityName == "Book" })
        let price = try #require(forward.entityMappings[index].attributeMappings.firstIndex { $0.name == "price" })
        forward.entityMappings[index].attributeMappings[price].valueExpression = try Expression(format: "$source.price * 100")
        forward.isInferred = false
        forward.name = "Cents"
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: models, mappingModels: [forward]), logger: testLogger)
        let error = #expect(throws: MigrationError.self) { try migrator.plan(from: v2, to: "Shelves 1", store: .sqlite("unused.sqlite")) }
        #expect(error?.code == .irreversibleStep)
        #expect(
            error?.message.contains("in the step 'Shelves 1' → 'Shelves 2', the mapping model Cents fills Book.price with") == true,
            "\(String(describing: error))"
        )
        // Given the mapping back, the same step back is planned by it.
        var back = try MappingModel.inferred(from: v2, to: v1)
        back.isInferred = false
        back.name = "FromCents"
        let given = ProgressiveMigrator(chain: MigrationChain(models: models, mappingModels: [forward, back]), logger: testLogger)
        let plan = try given.plan(from: v2, to: "Shelves 1", store: .sqlite("unused.sqlite"))
        #expect(plan.steps.map { $0.mappingModels.map(\.name) } == [["FromCents"]])
    }

    /// A step forward that removed an entity: a store of the newer version has no rows of
    /// it, and the step back makes it again, empty; a required relationship to it has no
    /// objects to come from, and is refused.
    @Test func aRemovedEntityComesBackEmpty() throws {
        let v1 = try Self.model(1)
        let v2 = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                #"<entity name="Book" representedClassName="Book"><attribute name="title" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Double" usesScalarValueType="YES"/></entity>"#
            ),
            name: "Shelves 2",
            file: ModelFixtures.file
        )
        let models = try VersionedModel(name: "Shelves", versions: [v1, v2], currentVersionName: "Shelves 2")
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger)
        let plan = try migrator.plan(from: v2, to: "Shelves 1", store: .sqlite("unused.sqlite"))
        let mappings = try #require(plan.steps.first?.mappingModels.first?.entityMappings)
        #expect(mappings.contains { $0.type == .add && $0.destinationEntityName == "Shelf" })
        #expect(plan.steps.allSatisfy { !$0.dataLossWarnings.contains(where: \.isCertain) })

        let required = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Shelf" representedClassName="Shelf"><attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/></entity>
                <entity name="Book" representedClassName="Book"><attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="shelf" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/></entity>
                """
            ),
            name: "Shelves 1",
            file: ModelFixtures.file
        )
        let bookOnly = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                #"<entity name="Book" representedClassName="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"#
            ),
            name: "Shelves 2",
            file: ModelFixtures.file
        )
        let requiring = try VersionedModel(name: "Shelves", versions: [required, bookOnly], currentVersionName: "Shelves 2")
        let error = #expect(throws: MigrationError.self) {
            try ProgressiveMigrator(chain: MigrationChain(models: requiring), logger: testLogger).plan(
                from: bookOnly,
                to: "Shelves 1",
                store: .sqlite("unused.sqlite")
            )
        }
        #expect(error?.code == .irreversibleStep)
        #expect(error?.message.contains("Book.shelf is dropped, which 'Shelves 1' requires") == true, "\(String(describing: error))")
    }

    /// A type changed forward (a Float become a Double) has no inverse that gives every value back.
    @Test func aChangedTypeHasNoInverse() throws {
        let v1 = try Self.model(1)
        let v2 = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Shelf" representedClassName="Shelf"><attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/></entity>
                <entity name="Book" representedClassName="Book"><attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="price" optional="YES" attributeType="Decimal"/>
                <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/></entity>
                """
            ),
            name: "Shelves 2",
            file: ModelFixtures.file
        )
        let models = try VersionedModel(name: "Shelves", versions: [v1, v2], currentVersionName: "Shelves 2")
        let error = #expect(throws: MigrationError.self) {
            try ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).plan(
                from: v2,
                to: "Shelves 1",
                store: .sqlite("unused.sqlite")
            )
        }
        #expect(error?.code == .irreversibleStep)
        #expect(error?.message.contains("Book.price changes type from Double to Decimal") == true, "\(String(describing: error))")
    }

    /// A property renamed that kept its renaming identifier, beside a new one of the old
    /// name: inference fills both from the old one, and the step back takes the one of the
    /// same name, not the new one.
    @Test func aRenamedPropertyBesideANewOneOfItsOldNameComesBackByName() throws {
        func items(_ version: Int, _ body: String) throws -> ManagedObjectModel {
            try ManagedObjectModel(
                xml: ModelFixtures.xml(#"<entity name="Item" representedClassName="Item">\#(body)</entity>"#),
                name: "Items \(version)",
                file: ModelFixtures.file
            )
        }
        let v1 = try items(1, #"<attribute name="name" optional="YES" attributeType="String"/>"#)
        let v2 = try items(2, #"<attribute name="title" optional="YES" attributeType="String" elementID="name"/>"#)
        let v3 = try items(
            3,
            #"<attribute name="name" optional="YES" attributeType="String"/><attribute name="title" optional="YES" attributeType="String" elementID="name"/>"#
        )
        let models = try VersionedModel(name: "Items", versions: [v1, v2, v3], currentVersionName: "Items 3")
        let chain = try MigrationChain(models: models, through: ["Items 1", "Items 2", "Items 3"])
        let plan = try ProgressiveMigrator(chain: chain, logger: testLogger).plan(from: v3, to: "Items 2", store: .sqlite("unused.sqlite"))
        let mapping = try #require(plan.steps.first?.mappingModels.first?.entityMappings.first { $0.destinationEntityName == "Item" })
        #expect(mapping.propertyMapping(named: "title")?.valueExpression?.sourceKeyPath == ["title"])
        #expect(plan.steps[0].dataLossWarnings.map(\.kind) == [.attributeNotCarried(entity: "Item", attribute: "name", entityMapping: "ItemToItem")])
    }

    /// A store taken back says from where; a migration without a target (opening it) does
    /// not take it forward again, unchanged, while one that names the target does, and the
    /// mark is gone after it.
    @Test(arguments: TestEngine.allCases)
    func aStoreTakenBackIsTakenForwardOnlyByANamedTarget(engine: TestEngine) async throws {
        let models = try Self.models()
        let migrator = ProgressiveMigrator(chain: try MigrationChain(DeclaredVersion.self, models: models), logger: testLogger)
        try await engine.withStoreURL { url in
            try await Self.write(url, model: try #require(models.version(named: "Shelves 3")))
            try await migrator.migrateStore(at: url, to: "Shelves 2")
            #expect(try await PersistentStore.metadata(at: url).migratedBackFrom == "Shelves 3")
            let before = try await StoreSnapshot(url)
            let refused = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(refused?.code == .storeRolledBack)
            #expect(
                refused?.message
                    == "the store was migrated back from 'Shelves 3' to 'Shelves 2' (a rollback); a migration without a target does not take it forward again",
                "\(String(describing: refused))"
            )
            let opened = await #expect(throws: MigrationError.self) { _ = try await migrator.openStore(at: url) }
            #expect(opened?.code == .storeRolledBack)
            try await expectUnchanged(url, since: before)

            try await migrator.migrateStore(at: url, to: "Shelves 3")
            #expect(try await PersistentStore.metadata(at: url).migratedBackFrom == nil)
            #expect(
                try await Self.read(url, model: try #require(models.version(named: "Shelves 3")))
                    == Dictionary(uniqueKeysWithValues: Self.shelving.map { ($0.shelf, $0.books) })
            )
        }
    }

    /// Opening a store, or migrating it with no target, never takes it back: a store of a
    /// version the app's chain has after the current one is refused, unchanged, on both
    /// engines. (Without a chain there is no order but Core Data's: the current version is
    /// the newest, and a store goes straight to it.)
    @Test(arguments: TestEngine.allCases)
    func withoutATargetAStoreIsNeverTakenBack(engine: TestEngine) async throws {
        let all = try Self.models()
        let models = try VersionedModel(name: "Shelves", versions: all.versions, currentVersionName: "Shelves 2")
        let v3 = try #require(models.version(named: "Shelves 3"))
        try await engine.withStoreURL { url in
            try await Self.write(url, model: v3)
            let before = try await StoreSnapshot(url)
            let chain = try MigrationChain(models: models, through: ["Shelves 1", "Shelves 2", "Shelves 3"])
            let migrator = ProgressiveMigrator(chain: chain, logger: testLogger)
            let error = await #expect(throws: (any Error).self) { try await migrator.migrateStore(at: url) }
            #expect((error as? MigrationError)?.code == .newerStore, "\(String(describing: error))")
            #expect("\(String(describing: error))".contains("does not take it back"), "\(String(describing: error))")
            let opened = await #expect(throws: (any Error).self) { _ = try await migrator.openStore(at: url) }
            #expect(opened != nil)
            try await expectUnchanged(url, since: before)
        }
    }

    /// A custom manager that declares nothing may have set anything: no inverse. One that
    /// declares it sets only what the newer version added has one.
    @Test func aManagerHasAnInverseOnlyWhenItDeclaresWhatItSets() throws {
        let models = try Self.models()
        let v2 = try #require(models.version(named: "Shelves 2"))
        let undeclared = ProgressiveMigrator(chain: try MigrationChain(UndeclaredVersion.self, models: models), logger: testLogger)
        let error = #expect(throws: MigrationError.self) { try undeclared.plan(from: v2, to: "Shelves 1", store: .sqlite("unused.sqlite")) }
        #expect(error?.code == .irreversibleStep)
        #expect(
            error?.message.contains("the migration manager UndeclaredManager runs Swift on each instance of") == true,
            "\(String(describing: error))"
        )

        let declared = ProgressiveMigrator(chain: try MigrationChain(DeclaredVersion.self, models: models), logger: testLogger)
        let plan = try declared.plan(from: v2, to: "Shelves 1", store: .sqlite("unused.sqlite"))
        #expect(plan.goesBack && plan.steps.count == 1 && plan.steps[0].mappingModels[0].isInferred)

        let overwriting = ProgressiveMigrator(chain: try MigrationChain(OverwritingVersion.self, models: models), logger: testLogger)
        let overwrites = #expect(throws: MigrationError.self) { try overwriting.plan(from: v2, to: "Shelves 1", store: .sqlite("unused.sqlite")) }
        #expect(
            overwrites?.message.contains("the migration manager OverwritingManager sets Book.title, which 'Shelves 1' had") == true,
            "\(String(describing: overwrites))"
        )
    }
}

/// Sets every book's ISBN (added in version 2) in Swift, declaring nothing.
final class UndeclaredManager: MigrationManager, @unchecked Sendable {
    override func needsAssociationCalls(for mapping: EntityMapping) -> Bool { mapping.destinationEntityName == "Book" }
}

/// The same, declaring that it reads the title and sets the ISBN only.
final class DeclaredManager: MigrationManager, @unchecked Sendable {
    override func needsAssociationCalls(for mapping: EntityMapping) -> Bool { mapping.destinationEntityName == "Book" }
    override func declaredAssociationValues(for mapping: EntityMapping) -> DeclaredValues? { DeclaredValues(reads: ["title"], sets: ["isbn"]) }
}

/// Declares that it sets the title, which version 1 had.
final class OverwritingManager: MigrationManager, @unchecked Sendable {
    override func needsAssociationCalls(for mapping: EntityMapping) -> Bool { mapping.destinationEntityName == "Book" }
    override func declaredAssociationValues(for mapping: EntityMapping) -> DeclaredValues? {
        DeclaredValues(reads: ["title"], sets: ["title", "isbn"])
    }
}

enum UndeclaredVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shelves 1"
    case v2 = "Shelves 2"
    case v3 = "Shelves 3"
    var modelName: String { rawValue }
    func nextVersion() -> UndeclaredVersion? { self == .v1 ? .v2 : self == .v2 ? .v3 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? UndeclaredManager.self : MigrationManager.self }
}

enum DeclaredVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shelves 1"
    case v2 = "Shelves 2"
    case v3 = "Shelves 3"
    var modelName: String { rawValue }
    func nextVersion() -> DeclaredVersion? { self == .v1 ? .v2 : self == .v2 ? .v3 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? DeclaredManager.self : MigrationManager.self }
}

enum OverwritingVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shelves 1"
    case v2 = "Shelves 2"
    case v3 = "Shelves 3"
    var modelName: String { rawValue }
    func nextVersion() -> OverwritingVersion? { self == .v1 ? .v2 : self == .v2 ? .v3 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? OverwritingManager.self : MigrationManager.self }
}
