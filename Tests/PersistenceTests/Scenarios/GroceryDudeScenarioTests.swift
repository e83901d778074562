import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

// Grocery Dude, from Tim Roadley's "Learning Core Data for iOS", chapter 3:
// Model 2 adds `Measurement` (abc); Model 3 renames it `Amount` (xyz) by renaming
// identifiers; Model 4 drops `Amount` for `Unit` (name), filled from `$source.xyz` by the
// entity mapping `AmountToUnit` of a mapping model, while `Item` keeps its data. The book
// shows the migration's progress; here it comes from `progressUpdates()`.

enum GroceryDudeVersion: String, MigrationVersion, CaseIterable {
    case model = "Model"
    case model2 = "Model 2"
    case model3 = "Model 3"
    case model4 = "Model 4"

    var modelName: String { rawValue }

    func nextVersion() -> GroceryDudeVersion? {
        switch self {
        case .model: .model2
        case .model2: .model3
        case .model3: .model4
        case .model4: nil
        }
    }
}

enum GroceryDude {
    static func models() throws -> VersionedModel { try Scenario.models("GroceryDude", "Model") }

    /// The book's mapping model, `Mappings/Model3ToModel4.json`.
    static func chain() throws -> MigrationChain {
        let models = try models()
        return try MigrationChain(GroceryDudeVersion.self, models: models, mappingModels: try Scenario.mappingModels("GroceryDude", versions: models))
    }

    static let items: [(name: String, quantity: Double, listed: Bool)] = [
        ("Apples", 6, true), ("Bananas", 5, true), ("Bread", 1, false), ("Butter", 1, true), ("Cheese", 0.5, true),
        ("Coffee", 1, false), ("Eggs", 12, true), ("Milk", 2, true), ("Rice", 1, false), ("Tomatoes", 4, true),
    ]
    static let units = ["kg", "g", "lb", "oz", "L", "ml", "dozen", "bunch"]
    /// Enough amounts for several batches of the migration manager.
    static let amountCount = 2_400

    /// Items, and amounts in the entity of `version` (`Measurement.abc` or `Amount.xyz`).
    static func seed(at url: StoreURL, version: String) async throws {
        let model = try Scenario.version(version, of: try models())
        let (entity, key) = version == "Model 2" ? ("Measurement", "abc") : ("Amount", "xyz")
        try await Scenario.seed(model, at: url) { context in
            for item in items {
                let object = try context.insertObject(entityName: "Item")
                object.setValue(.string(item.name), forKey: "name")
                object.setValue(.double(item.quantity), forKey: "quantity")
                object.setValue(.bool(item.listed), forKey: "listed")
            }
            for index in 0..<amountCount {
                let amount = try context.insertObject(entityName: entity)
                amount.setValue(.string(units[index % units.count]), forKey: key)
            }
        }
    }

    /// What a `Model 4` store must hold after migrating the seed.
    static func checkModel4Store(_ url: StoreURL, models: VersionedModel) async throws {
        let model4 = try Scenario.version("Model 4", of: models)
        #expect(model4.isCompatible(with: try await PersistentStore.metadata(at: url)))
        let context = try await Scenario.open(model4, at: url)
        #expect(try await Scenario.count("Unit", in: context) == amountCount)
        for unit in units {
            #expect(try await Scenario.count("Unit", in: context, where: "name == %@", .value(.string(unit))) == amountCount / units.count)
        }
        #expect(try await Scenario.count("Unit", in: context, where: "name == nil") == 0)
        #expect(try await Scenario.count("Item", in: context) == items.count)
        let migrated = try await Scenario.all("Item", in: context)
        #expect(migrated.map { $0.value(forKey: "name") } == items.map { .string($0.name) })
        #expect(migrated.map { $0.value(forKey: "quantity") } == items.map { .double($0.quantity) })
        #expect(migrated.map { $0.value(forKey: "listed") } == items.map { .bool($0.listed) })
        let milk = try await Scenario.one("Item", "name", "Milk", in: context)
        #expect(milk.value(forKey: "quantity") == 2.0)
        #expect(milk.value(forKey: "listed") == true)
    }
}

@Suite struct GroceryDudeScenarioTests {
    @Test(arguments: TestEngine.allCases)
    func model3MigratesToModel4ThroughAmountToUnitWithProgress(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await GroceryDude.seed(at: url, version: "Model 3")
            let chain = try GroceryDude.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url)
            #expect(plan.steps.map { "\($0.source.name) → \($0.destination.name)" } == ["Model 3 → Model 4"])
            #expect(plan.steps[0].mappingModels.map(\.name) == ["Model3ToModel4"])
            try await expectNoLeftovers(url)
            try await GroceryDude.checkModel4Store(url, models: chain.models)

            // The book's progress view: from the start to exactly 1, never backwards.
            Scenario.checkProgress(progress, steps: 1)
            #expect(progress.count > 3, "several batches report progress")
            #expect(progress.last?.stage == .finished)
            #expect(
                progress.contains {
                    $0.entityMapping == "AmountToUnit" && $0.stage == .createInstances && $0.instancesTotal == GroceryDude.amountCount
                }
            )
            let creating = progress.filter { $0.entityMapping == "AmountToUnit" && $0.stage == .createInstances }.map(\.instancesDone)
            #expect(creating == creating.sorted() && creating.last == GroceryDude.amountCount)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func model2MigratesToModel4ThroughTheRenameAndTheMapping(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await GroceryDude.seed(at: url, version: "Model 2")
            let chain = try GroceryDude.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url)
            #expect(plan.steps.map(\.destination.name) == ["Model 3", "Model 4"])
            #expect(plan.steps[0].mappingModels.first?.isInferred == true)
            #expect(plan.steps[0].mappingModels.first?.entityMappings.map(\.name).contains("MeasurementToAmount") == true)
            Scenario.checkProgress(progress, steps: 2)
            try await GroceryDude.checkModel4Store(url, models: chain.models)
        }
    }

    @Test func aMappingFileReadingAMissingAttributeIsRefusedWhenLoaded() throws {
        // `abc` is the attribute's name in Model 2; in Model 3 it is `xyz`.
        let folder = try ScenarioFolder()
        let mappings = folder.url.appendingPathComponent("Mappings")
        try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: false)
        let original = Scenario.fixtures.appendingPathComponent("GroceryDude/Mappings/Model3ToModel4.json")
        let text = try String(contentsOf: original, encoding: .utf8)
        #expect(text.contains(#""name": "$source.xyz""#))
        try Data(text.replacingOccurrences(of: "$source.xyz", with: "$source.abc").utf8)
            .write(to: mappings.appendingPathComponent("Model3ToModel4.json"))

        let error = #expect(throws: MigrationError.self) {
            _ = try MappingModel.load(directory: mappings, versions: try GroceryDude.models())
        }
        #expect(error?.code == .unknownKeyPath)
        #expect(error?.file == "Mappings/Model3ToModel4.json")
        #expect(error?.entityMapping == "AmountToUnit")
        #expect(error?.property == "name")
        #expect(error.map { "\($0)" }?.contains("abc") == true)
    }

    @Test(arguments: TestEngine.allCases)
    func aMappingReadingAMissingAttributeStopsTheMigrationBeforeTheStoreIsTouched(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await GroceryDude.seed(at: url, version: "Model 3")
            let before = try await StoreSnapshot(url)

            // The same mistake in a mapping model built in Swift, which no loader checked.
            let models = try GroceryDude.models()
            var mapping = try #require(try Scenario.mappingModels("GroceryDude", versions: models).first)
            let index = try #require(mapping.entityMappings.firstIndex { $0.name == "AmountToUnit" })
            mapping.entityMappings[index].attributeMappings = [PropertyMapping(name: "name", valueExpression: try Expression(format: "$source.abc"))]
            let chain = try MigrationChain(GroceryDudeVersion.self, models: models, mappingModels: [mapping])

            let error = await #expect(throws: MigrationError.self) {
                _ = try await Scenario.migrate(chain, store: url)
            }
            #expect(error?.code == .unknownKeyPath)
            #expect(error?.entityMapping == "AmountToUnit")
            try await expectUnchanged(url, since: before)
        }
    }
}
