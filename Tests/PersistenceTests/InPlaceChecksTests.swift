import Foundation
import Testing
@testable import Persistence

enum CounterVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Counter", v2 = "Counter 2"
    var modelName: String { rawValue }
    func nextVersion() -> CounterVersion? { self == .v1 ? .v2 : nil }
}

/// An in-place step whose attributes' rules tighten checks them before it commits.
@Suite struct InPlaceChecksTests {
    func models(_ old: String, _ new: String) throws -> VersionedModel {
        try ShopModels.versioned([
            ShopModels.model("Counter", "1", #"<entity name="Tally"><attribute name="count" optional="YES" attributeType="\#(old)"/></entity>"#),
            ShopModels.model("Counter 2", "2", #"<entity name="Tally"><attribute name="count" optional="YES" attributeType="\#(new)"/></entity>"#),
        ])
    }

    func store(_ model: ManagedObjectModel, counts: [AttributeValue]) async throws -> (String, @Sendable () -> Void) {
        let (path, cleanUp) = makeStoreFolder()
        try await makeClosedStore(at: path, model: model) { container in
            let context = container.newContext()
            for count in counts { try context.insertObject(entityName: "Tally").setValue(count, forKey: "count") }
            try await context.save()
        }
        return (path, cleanUp)
    }

    @Test func aNarrowerIntegerTypeIsCheckedAndAValueOutOfRangeRollsBack() async throws {
        let versions = try models("Integer 32", "Integer 16")
        let (path, cleanUp) = try await store(versions.versions[0], counts: [1, 70_000])
        defer { cleanUp() }
        let before = try FileSnapshot(path: path)
        let migrator = ProgressiveMigrator(chain: try MigrationChain(CounterVersion.self, models: versions), logger: testLogger)
        #expect(try migrator.plan(from: versions.versions[0], store: .sqlite(path)).steps.map(\.strategy) == [.inPlace])
        let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: .sqlite(path)) }
        #expect(error?.code == .validationFailed)
        #expect(error?.description.contains("Tally/p2 count: valueTooLarge") == true)
        #expect(error?.description.contains("70000") == false, "no row values in the message")
        #expect(try FileSnapshot(path: path).bytes == before.bytes)
    }

    @Test func valuesInRangePass() async throws {
        let versions = try models("Integer 32", "Integer 16")
        let (path, cleanUp) = try await store(versions.versions[0], counts: [1, 30_000])
        defer { cleanUp() }
        try await ProgressiveMigrator(chain: try MigrationChain(CounterVersion.self, models: versions), logger: testLogger).migrateStore(at: .sqlite(path))
        let container = try await PersistentContainer.open(model: versions.current, store: .sqlite(path), logger: testLogger)
        let counts = try await container.newContext().fetch(FetchRequest(entityName: "Tally", sortDescriptors: [SortDescriptor(key: "count")]))
        #expect(counts.map { $0.value(forKey: "count") } == [1, 30_000])
    }

    @Test func doubleToDecimalDoesNotRunInPlace() throws {
        let versions = try models("Double", "Decimal")
        let migrator = ProgressiveMigrator(chain: try MigrationChain(CounterVersion.self, models: versions), logger: testLogger)
        #expect(try migrator.plan(from: versions.versions[0], store: .sqlite("/nonexistent.sqlite")).steps.map(\.strategy) == [.streamed])
    }
}
