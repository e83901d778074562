import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// The shop's three versions: v2 adds an optional `label`, v3 makes `name` required.
enum ShopModels {
    static func v1() throws -> ManagedObjectModel {
        try model(
            "Shop",
            "1",
            """
            <entity name="Item"><attribute name="name" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/></entity>
            """
        )
    }
    static func v2() throws -> ManagedObjectModel {
        try model(
            "Shop 2",
            "2",
            """
            <entity name="Item"><attribute name="name" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/><attribute name="label" optional="YES" attributeType="String"/></entity>
            """
        )
    }
    static func v3() throws -> ManagedObjectModel {
        try model(
            "Shop 3",
            "3",
            """
            <entity name="Item"><attribute name="name" attributeType="String"/><attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/><attribute name="label" optional="YES" attributeType="String"/></entity>
            """
        )
    }
    /// A version 3 that adds a required `code` with no default: not inferable.
    static func v3WithANewRequiredCode() throws -> ManagedObjectModel {
        try model(
            "Shop 3",
            "3",
            """
            <entity name="Item"><attribute name="name" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/><attribute name="label" optional="YES" attributeType="String"/><attribute name="code" attributeType="String"/></entity>
            """
        )
    }
    /// A version 3 that only adds an optional `note`: what a chain may reach from 1 in one jump.
    static func v3Optional() throws -> ManagedObjectModel {
        try model(
            "Shop 3",
            "3",
            """
            <entity name="Item"><attribute name="name" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/><attribute name="label" optional="YES" attributeType="String"/><attribute name="note" optional="YES" attributeType="String"/></entity>
            """
        )
    }
    static func model(_ name: String, _ identifier: String, _ body: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(xml: ModelFixtures.xml(body, identifier: identifier), name: name, file: "\(name).xcdatamodel/contents")
    }
    static func versioned(_ models: [ManagedObjectModel]) throws -> VersionedModel {
        try VersionedModel(name: "Shop", versions: models, currentVersionName: models.last!.name)
    }
}

enum ShopVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shop"
    case v2 = "Shop 2"
    var modelName: String { rawValue }
    func nextVersion() -> ShopVersion? { self == .v1 ? .v2 : nil }
}

/// A chain that jumps from version 1 straight to 3, skipping 2.
enum SkippingShopVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shop"
    case v2 = "Shop 2"
    case v3 = "Shop 3"
    var modelName: String { rawValue }
    func nextVersion() -> SkippingShopVersion? { self == .v1 ? .v3 : nil }
}

/// The progressive migrator on every engine: refusals leave the store as it was (on
/// PostgreSQL: the same tables, rows and `z_metadata`, and no shadow schema left behind).
@Suite struct ProgressiveMigratorTests {
    /// Writes a closed store of `model` holding `names` at `url`.
    func makeStore(at url: StoreURL, _ model: ManagedObjectModel, names: [String?]) async throws {
        try await makeClosedStore(at: url, model: model) { container in
            let context = container.newContext()
            for (index, name) in names.enumerated() {
                let item = try context.insertObject(entityName: "Item")
                item.setValue(name.map(AttributeValue.string) ?? .null, forKey: "name")
                item.setValue(.double(Double(index)), forKey: "price")
            }
            try await context.save()
        }
    }

    /// The items of the store at `url`, read with `model`, by name.
    func items(at url: StoreURL, _ model: ManagedObjectModel) async throws -> [ManagedObject] {
        try await withOpenStore(url, model: model) { container in
            try await container.newContext().fetch(FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "name")]))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aStoreOfANewerVersionIsRefusedAndLeftUntouched(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v3(), names: ["a"])
            let before = try await StoreSnapshot(url)
            let chain = try MigrationChain(ShopVersion.self, models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]))
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            }
            #expect(error?.code == .newerStore)
            #expect(error?.description.contains("'Shop 3'") == true)
            #expect(error?.description.contains("newer") == true)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aStoreOfAnUnknownModelIsRefusedAndLeftUntouched(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let other = try ShopModels.model(
                "Other",
                "",
                #"<entity name="Thing"><attribute name="x" optional="YES" attributeType="String"/></entity>"#
            )
            try await makeStore(at: url, other, names: [])
            let before = try await StoreSnapshot(url)
            let chain = try MigrationChain(ShopVersion.self, models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]))
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            }
            #expect(error?.code == .unknownStoreVersion)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aChainMaySkipAVersion(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v1(), names: ["a", "b"])
            let models = try ShopModels.versioned([ShopModels.v1(), ShopModels.v2(), ShopModels.v3Optional()])
            let migrator = ProgressiveMigrator(chain: try MigrationChain(SkippingShopVersion.self, models: models), logger: testLogger)
            let plan = try await migrator.migrateStore(at: url)
            #expect(plan.steps.map { "\($0.source.name) → \($0.destination.name)" } == ["Shop → Shop 3"])
            try await expectNoLeftovers(url)
            let items = try await items(at: url, try ShopModels.v3Optional())
            #expect(items.map { $0.value(forKey: "name") } == ["a", "b"])
            #expect(items.map { $0.value(forKey: "label") } == [.null, .null])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func openStoreMigratesAnOlderStoreAndOpensACurrentOneAsItIs(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let chain = try MigrationChain(ShopVersion.self, models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]))
            let missing = await #expect(throws: StoreError.self) {
                try await ProgressiveMigrator(chain: chain, logger: testLogger).openStore(at: url)
            }
            #expect(missing?.code == .storeNotFound)

            try await makeStore(at: url, try ShopModels.v1(), names: ["a", "b"])
            let migrator = ProgressiveMigrator(chain: chain, logger: testLogger)
            let updates = migrator.progressUpdates()
            let store = try await migrator.openStore(at: url)
            #expect(store.model.name == "Shop 2")
            let items = try await PersistentContainer(store: store, logger: testLogger).newContext()
                .fetch(FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "name")]))
            #expect(items.map { $0.value(forKey: "name") } == ["a", "b"])
            #expect(items.map { $0.value(forKey: "label") } == [.null, .null])
            await store.close()
            // The migration reported its progress, and the sequence ended with it.
            var reports = 0
            for await _ in updates { reports += 1 }
            #expect(reports > 0)
            try await expectNoLeftovers(url)

            // Current now: opened as it is, the updates end without a report.
            let before = try await StoreSnapshot(url)
            let again = ProgressiveMigrator(chain: chain, logger: testLogger)
            let quiet = again.progressUpdates()
            let current = try await again.openStore(at: url)
            #expect(current.metadata.storeUUID == store.metadata.storeUUID)
            await current.close()
            var none = 0
            for await _ in quiet { none += 1 }
            #expect(none == 0)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func openStoreRefusesANewerStoreAndLeavesItUntouched(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v3(), names: ["a"])
            let before = try await StoreSnapshot(url)
            let chain = try MigrationChain(ShopVersion.self, models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]))
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, logger: testLogger).openStore(at: url)
            }
            #expect(error?.code == .newerStore)
            try await expectUnchanged(url, since: before)
        }
    }

    /// A store with no way forward to the target is told why in the app's terms, not the
    /// chain's API: no step leaves its version, or the target comes before it.
    @Test func aMissingOrBackwardPathIsExplainedInTheModelsTerms() throws {
        let models = try ShopModels.versioned([ShopModels.v1(), ShopModels.v2(), ShopModels.v3Optional()])
        let migrator = ProgressiveMigrator(chain: try MigrationChain(SkippingShopVersion.self, models: models), logger: testLogger)
        let store = StoreURL.sqlite("/nonexistent/shop.sqlite")
        let missing = #expect(throws: MigrationError.self) {
            try migrator.plan(from: try #require(models.version(named: "Shop 2")), to: "Shop 3", store: store)
        }
        #expect(missing?.code == .noPath)
        #expect(
            missing?.message == "no step of the chain leads from 'Shop 2' to 'Shop 3': no version follows 'Shop 2'",
            "\(String(describing: missing))"
        )
        // Back along the chain is a way back; from a version the chain does not pass through, none.
        let back = try migrator.plan(from: try #require(models.version(named: "Shop 3")), to: "Shop", store: store)
        #expect(back.goesBack && back.steps.map { "\($0.source.name) → \($0.destination.name)" } == ["Shop 3 → Shop"])
        let backward = #expect(throws: MigrationError.self) {
            try migrator.plan(from: try #require(models.version(named: "Shop 2")), to: "Shop", store: store)
        }
        #expect(backward?.code == .noPath)
        #expect(
            backward?.message
                == "the store is at 'Shop 2', after 'Shop', and the chain leads from 'Shop' to 'Shop 2' by no way a migration back could walk",
            "\(String(describing: backward))"
        )
        for error in [missing, backward] {
            #expect(error.map { !"\($0)".contains("nextVersion") } == true, "\(String(describing: error))")
        }
    }

    @Test func aNewRequiredAttributeWithoutDefaultCannotBeInferred() throws {
        let error = #expect(throws: MigrationError.self) {
            try MappingModel.inferred(from: try ShopModels.v2(), to: try ShopModels.v3WithANewRequiredCode())
        }
        #expect(error?.code == .cannotInferMapping)
        #expect(error?.entityMapping == "Item")
        #expect(error?.property == "code")
        #expect(error?.description.contains("mapping model") == true)
    }

    /// A mapping that copies `name` as it is, so rows without a name break v3's rule.
    func nameCopyingMapping() throws -> MappingModel {
        let source = try ShopModels.v2()
        let destination = try ShopModels.v3()
        return MappingModel(
            name: "Shop2ToShop3",
            source: source,
            destination: destination,
            entityMappings: [
                EntityMapping(
                    name: "ItemToItem",
                    type: .transform,
                    sourceEntityName: "Item",
                    destinationEntityName: "Item",
                    attributeMappings: [
                        PropertyMapping(name: "name", valueExpression: try Expression(format: "$source.name")),
                        PropertyMapping(name: "price", valueExpression: try Expression(format: "$source.price * 2")),
                    ]
                )
            ]
        )
    }

    @Test(arguments: TestEngine.allCases)
    func aMigrationThatBreaksTheModelsRulesLeavesTheStoreAsItWas(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v2(), names: ["a", nil, "c"])
            let before = try await StoreSnapshot(url)
            let models = try ShopModels.versioned([ShopModels.v2(), ShopModels.v3()])
            let chain = try MigrationChain(ShopVersion2To3.self, models: models, mappingModels: [try nameCopyingMapping()])
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            }
            #expect(error?.code == .validationFailed)
            #expect(error?.description.contains("Item/p2 name: missingValue") == true)
            #expect((error?.underlying as? ValidationError)?.issues.count == 1)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aMappingModelFoundByVersionHashesRunsItsExpressions(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v2(), names: ["a", "b"])
            let models = try ShopModels.versioned([ShopModels.v2(), ShopModels.v3()])
            let chain = try MigrationChain(ShopVersion2To3.self, models: models, mappingModels: [try nameCopyingMapping()])
            let plan = try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            #expect(plan.steps.first?.mappingModels.map(\.name) == ["Shop2ToShop3"])
            try await expectNoLeftovers(url)
            #expect(try await items(at: url, try ShopModels.v3()).map { $0.value(forKey: "price") } == [0.0, 2.0])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anUnregisteredPolicyIsNamedAndNothingChanges(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v1(), names: ["a"])
            let before = try await StoreSnapshot(url)
            var mapping = try MappingModel.inferred(from: try ShopModels.v1(), to: try ShopModels.v2())
            mapping.name = "WithPolicy"
            mapping.isInferred = false
            mapping.entityMappings[0].type = .custom
            mapping.entityMappings[0].policyName = "Shop.MissingPolicy"
            let chain = try MigrationChain(
                ShopVersion.self,
                models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]),
                mappingModels: [mapping]
            )
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            }
            #expect(error?.code == .unknownPolicy)
            #expect(error?.description.contains("Shop.MissingPolicy") == true)
            try await expectUnchanged(url, since: before)
        }
    }

    /// Takes the migration lock of the store at `url` the way another migrator holds it;
    /// returns how to give it up and how a waiting migrator must name the holder.
    func holdMigrationLock(of url: StoreURL) async throws -> (release: () async -> Void, holder: String) {
        switch url.kind {
        case .sqlite(let path):
            let held = try await SQLiteMigrationLock.acquire(storeAt: path, store: url, timeout: .seconds(1), logger: testLogger)
            return ({ held.release() }, "pid \(getpid())")
        case .postgres(var configuration):
            configuration.parameters["application_name"] = "shop-migrator"
            let held = try await PostgresMigrationBackend(store: url, configuration: configuration).acquireLock(
                timeout: .seconds(1),
                logger: testLogger
            )
            let pid = try await storeRows(
                url,
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'shop-migrator'"
            )
            #expect(pid.count == 1, "one session holds the lock")
            return ({ await held.release() }, "server process \(pid.first?.first?.int64 ?? -1), shop-migrator")
        case .memory:
            preconditionFailure("an in-memory store has no migration lock")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aMigrationWaitsBoundedlyForAnotherAndNamesIt(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v1(), names: ["a"])
            let before = try await StoreSnapshot(url)
            let held = try await holdMigrationLock(of: url)
            let chain = try MigrationChain(ShopVersion.self, models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]))
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, lockTimeout: .milliseconds(300), logger: testLogger).migrateStore(at: url)
            }
            #expect(error?.code == .storeBusy)
            #expect(error?.description.contains(held.holder) == true, "\(error.map { "\($0)" } ?? "") names \(held.holder)")
            await held.release()
            try await expectUnchanged(url, since: before)
            try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            try await expectNoLeftovers(url)
            #expect(try await items(at: url, try ShopModels.v2()).map { $0.value(forKey: "name") } == ["a"])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func cancellingAMigrationLeavesTheStoreAsItWas(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await makeStore(at: url, try ShopModels.v1(), names: (0..<50).map { "item \($0)" })
            let before = try await StoreSnapshot(url)
            var mapping = try MappingModel.inferred(from: try ShopModels.v1(), to: try ShopModels.v2())
            mapping.name = "Blocking"
            mapping.isInferred = false
            mapping.entityMappings[0].type = .custom
            mapping.entityMappings[0].policyName = "BlockingPolicy"
            var policies = MigrationPolicies()
            policies.register(BlockingPolicy.self)
            let chain = try MigrationChain(
                ShopVersion.self,
                models: try ShopModels.versioned([ShopModels.v1(), ShopModels.v2()]),
                mappingModels: [mapping],
                policies: policies
            )
            let migrator = ProgressiveMigrator(chain: chain, logger: testLogger)
            let updates = migrator.progressUpdates()
            let task = Task { try await migrator.migrateStore(at: url) }
            // The first batch's report says the migration is under way; then cancel it.
            var underWay = false
            for await progress in updates where progress.stage == .createInstances {
                underWay = true
                task.cancel()
                break
            }
            #expect(underWay, "the migration never reported its first batch")
            let result = await task.result
            let error = #expect(throws: MigrationError.self) { try result.get() }
            #expect(error?.code == .cancelled, "a cancellation, not another failure: \(String(describing: error))")
            try await expectUnchanged(url, since: before)
        }
    }
}

enum ShopVersion2To3: String, MigrationVersion, CaseIterable {
    case v2 = "Shop 2"
    case v3 = "Shop 3"
    var modelName: String { rawValue }
    func nextVersion() -> ShopVersion2To3? { self == .v2 ? .v3 : nil }
}

/// Lets a batch through, then waits to be cancelled.
final class BlockingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }

    override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) async throws {
        // Stage 1 has reported progress by now; stay here until the task is cancelled.
        while !Task.isCancelled { try await Task.sleep(for: .milliseconds(10)) }
        throw CancellationError()
    }
}
