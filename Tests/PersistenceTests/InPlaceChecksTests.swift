import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

enum CounterVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Counter"
    case v2 = "Counter 2"
    var modelName: String { rawValue }
    func nextVersion() -> CounterVersion? { self == .v1 ? .v2 : nil }
}

enum StreamedCounterVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Counter"
    case v2 = "Counter 2"
    var modelName: String { rawValue }
    func nextVersion() -> StreamedCounterVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? StreamingManager.self : MigrationManager.self }
}

/// An in-place step whose attributes' rules tighten checks them before it commits.
@Suite struct InPlaceChecksTests {
    func models(_ old: String, _ new: String) throws -> VersionedModel {
        try ShopModels.versioned([
            ShopModels.model("Counter", "1", #"<entity name="Tally"><attribute name="count" optional="YES" attributeType="\#(old)"/></entity>"#),
            ShopModels.model("Counter 2", "2", #"<entity name="Tally"><attribute name="count" optional="YES" attributeType="\#(new)"/></entity>"#),
        ])
    }

    /// Writes a closed store of `model` at `url` with a tally for each of `counts`.
    func store(at url: StoreURL, _ model: ManagedObjectModel, counts: [AttributeValue]) async throws {
        try await makeClosedStore(at: url, model: model) { container in
            let context = container.newContext()
            for count in counts { try context.insertObject(entityName: "Tally").setValue(count, forKey: "count") }
            try await context.save()
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aNarrowerIntegerTypeIsCheckedAndAValueOutOfRangeRollsBack(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let versions = try models("Integer 32", "Integer 16")
            try await store(at: url, versions.versions[0], counts: [1, 70_000])
            let before = try await StoreSnapshot(url)
            let migrator = ProgressiveMigrator(chain: try MigrationChain(CounterVersion.self, models: versions), logger: testLogger)
            #expect(try migrator.plan(from: versions.versions[0], store: url).steps.map(\.strategy) == [.inPlace])
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(error?.code == .validationFailed, "\(error.map { "\($0)" } ?? "")")
            #expect(error?.description.contains("Tally/p2 count: valueTooLarge") == true)
            #expect(error?.description.contains("70000") == false, "no row values in the message")
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func valuesInRangePass(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let versions = try models("Integer 32", "Integer 16")
            try await store(at: url, versions.versions[0], counts: [1, 30_000])
            try await ProgressiveMigrator(chain: try MigrationChain(CounterVersion.self, models: versions), logger: testLogger).migrateStore(at: url)
            try await expectNoLeftovers(url)
            let counts = try await withOpenStore(url, model: versions.current) { container in
                try await container.newContext().fetch(
                    FetchRequest(entityName: "Tally", sortDescriptors: [FetchRequest.SortDescriptor(key: "count")])
                )
            }
            #expect(counts.map { $0.value(forKey: "count") } == [1, 30_000])
        }
    }

    /// Shelves whose `books` must number at least one from version 2 on.
    func shelfModels() throws -> VersionedModel {
        func model(_ name: String, _ identifier: String, minCount: String) throws -> ManagedObjectModel {
            try ShopModels.model(
                name,
                identifier,
                """
                <entity name="Shelf"><attribute name="label" optional="YES" attributeType="String"/><relationship name="books" optional="YES" toMany="YES" \(minCount) deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/></entity>
                <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/><relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/></entity>
                """
            )
        }
        return try ShopModels.versioned([model("Counter", "1", minCount: ""), model("Counter 2", "2", minCount: #"minCount="1""#)])
    }

    @Test(arguments: TestEngine.allCases, [false, true])
    func aNewMinimumCountIsCheckedInPlaceAndStreamed(engine: TestEngine, streamed: Bool) async throws {
        try await engine.withStoreURL { url in
            let versions = try shelfModels()
            try await makeClosedStore(at: url, model: versions.versions[0]) { container in
                let context = container.newContext()
                let full = try context.insertObject(entityName: "Shelf")
                full.setValue("full", forKey: "label")
                try context.insertObject(entityName: "Book").setDestination(full, forKey: "shelf")
                try context.insertObject(entityName: "Shelf").setValue("empty", forKey: "label")
                try await context.save()
            }
            let before = try await StoreSnapshot(url)
            let chain =
                streamed
                ? try MigrationChain(StreamedCounterVersion.self, models: versions) : try MigrationChain(CounterVersion.self, models: versions)
            let migrator = ProgressiveMigrator(chain: chain, logger: testLogger)
            #expect(try migrator.plan(from: versions.versions[0], store: url).steps.map(\.strategy) == [streamed ? .streamed : .inPlace])
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(error?.code == .validationFailed)
            #expect(error?.description.contains("Shelf/p2 books: tooFewObjects") == true)
            try await expectUnchanged(url, since: before)
        }
    }

    /// Planning only: no store is opened.
    @Test(arguments: TestEngine.allCases)
    func doubleToDecimalDoesNotRunInPlace(engine: TestEngine) throws {
        let versions = try models("Double", "Decimal")
        let migrator = ProgressiveMigrator(chain: try MigrationChain(CounterVersion.self, models: versions), logger: testLogger)
        let url: StoreURL =
            switch engine {
            case .sqlite: .sqlite("/nonexistent.sqlite")
            case .postgres: .postgres(try PostgresConfiguration(url: "postgres://localhost/nonexistent"))
            }
        #expect(try migrator.plan(from: versions.versions[0], store: url).steps.map(\.strategy) == [.streamed])
    }
}
