import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Without a chain of the app's, a store migrates as Core Data migrates it: the versions
/// have no order, the store's version is found by its hashes and the store goes straight
/// to the current version in one step, by a mapping model of the two or inferred. Version
/// names that sort unlike the app's history do not matter.
@Suite("Straight to the current version where no chain is given")
struct StraightMigrationTests {
    /// Shipped as "Cellar" → "Cellar 2" → "Attic" (current): in name order "Attic" comes first.
    static func model(_ name: String) throws -> ManagedObjectModel {
        let extra =
            switch name {
            case "Cellar": ""
            case "Cellar 2": #"<attribute name="vintage" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>"#
            default:
                """
                <attribute name="vintage" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="note" optional="YES" attributeType="String"/>
                """
            }
        return try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Bottle" representedClassName="Bottle">
                    <attribute name="label" optional="YES" attributeType="String"/>
                    <attribute name="cents" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                    \(extra)
                </entity>
                """
            ),
            name: name,
            file: ModelFixtures.file
        )
    }

    static func models() throws -> VersionedModel {
        try VersionedModel(name: "Cellar", versions: [try model("Attic"), try model("Cellar"), try model("Cellar 2")], currentVersionName: "Attic")
    }

    static let bottles: [(label: String?, cents: Int64?)] = [("Grüner Veltliner", 1_299), ("Château Ø", nil), (nil, 45_000), ("Rioja", 899)]

    @Test(arguments: TestEngine.allCases.flatMap { engine in ["Cellar", "Cellar 2"].map { (engine, $0) } })
    func versionsWhoseNamesSortOutOfHistoryOrder(engine: TestEngine, storeVersion: String) async throws {
        let models = try Self.models()
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: try #require(models.version(named: storeVersion)), options: .createIfMissing) { container in
                let context = container.newContext()
                for bottle in Self.bottles {
                    let object = try context.insertObject(entityName: "Bottle")
                    object.setValue(bottle.label.map(AttributeValue.string) ?? .null, forKey: "label")
                    object.setValue(bottle.cents.map(AttributeValue.integer) ?? .null, forKey: "cents")
                }
                try await context.save()
            }
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger)
            let planned = try await migrator.plan(forStoreAt: url)
            #expect(planned.route == .straight)
            #expect(planned.steps.map { "\($0.source.name) → \($0.destination.name)" } == ["\(storeVersion) → Attic"])
            try await migrator.migrateStore(at: url)

            try await withOpenStore(url, model: models.current) { container in
                let rows = try await container.newContext().fetch(FetchRequest(entityName: "Bottle"))
                let found = rows.map { ($0.value(forKey: "label").stringValue, $0.value(forKey: "cents").integerValue) }
                #expect(
                    found.map { "\($0.0 ?? "-")|\($0.1.map(String.init) ?? "-")" }.sorted()
                        == Self.bottles.map { "\($0.label ?? "-")|\($0.cents.map(String.init) ?? "-")" }.sorted()
                )
            }
        }
    }

    /// The app's own order still rules where it gives one: through every version it names.
    @Test(arguments: TestEngine.allCases)
    func aChainGoesThroughTheVersionsItNames(engine: TestEngine) async throws {
        let models = try Self.models()
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: try #require(models.version(named: "Cellar")), options: .createIfMissing) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Bottle").setValue(.string("Riesling"), forKey: "label")
                try await context.save()
            }
            let chain = try MigrationChain(models: models, through: ["Cellar", "Cellar 2", "Attic"])
            let plan = try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            #expect(plan.route == .chain)
            #expect(plan.steps.map { "\($0.source.name) → \($0.destination.name)" } == ["Cellar → Cellar 2", "Cellar 2 → Attic"])
            #expect(try await storeRows(url, "SELECT ZLABEL FROM ZBOTTLE") == [[.text("Riesling")]])
        }
    }

    @Test func aChainNamingAnUnknownVersionIsRefused() throws {
        let models = try Self.models()
        let error = #expect(throws: MigrationError.self) { try MigrationChain(models: models, through: ["Cellar", "Keller"]) }
        #expect(error?.code == .noPath)
        #expect(error?.description.contains("'Keller'") == true)
    }
}
