import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

/// Feedback's version 4 to 5 mapping model, as Xcode saved it: its value expressions give
/// the numbers 0 and 1 for the Boolean `ATMessage.automated`, which Core Data stores as the
/// Boolean they stand for.
@Suite struct XcodeBooleanMappingTests {
    static let folder = ModelFixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/CoreData/Feedback")
    static let mapping = folder.appendingPathComponent("mappings/ATDataModel v4 to v5.xcmappingmodel")
    static let store = folder.appendingPathComponent("stores/ATDataModelv4.sqlite")

    enum Version: String, MigrationVersion, CaseIterable {
        case v4 = "ATDataModel 4", v5 = "ATDataModel 5"
        var modelName: String { rawValue }
        func nextVersion() -> Version? { self == .v4 ? .v5 : nil }
    }

    /// The same two steps, run by a manager subclass: such a step goes object by object
    /// through the Swift evaluator rather than SQL.
    enum StreamedVersion: String, MigrationVersion, CaseIterable {
        case v4 = "ATDataModel 4", v5 = "ATDataModel 5"
        var modelName: String { rawValue }
        func nextVersion() -> StreamedVersion? { self == .v4 ? .v5 : nil }
        var migrationManagerType: MigrationManager.Type { self == .v5 ? StreamingManager.self : MigrationManager.self }
    }

    static func models() throws -> VersionedModel {
        try VersionedModel(contentsOf: folder.appendingPathComponent("ATDataModel.xcdatamodeld"))
    }

    @Test func theMappingModelLoadsWithNumbersForABoolean() throws {
        let models = try Self.models()
        let mapping = try MappingModel(contentsOf: Self.mapping, versions: models)
        #expect(mapping.maps(from: try #require(models.version(named: "ATDataModel 4")), to: try #require(models.version(named: "ATDataModel 5"))))
        let automated = mapping.entityMappings.compactMap { entityMapping in
            entityMapping.propertyMapping(named: "automated").map { (entityMapping.name, $0.valueExpression?.format) }
        }
        #expect(Dictionary(uniqueKeysWithValues: automated) == [
            "ATTextMessageToATMessage": "0", "ATFileMessageToATMessage": "0", "ATAutomatedMessageToATMessage": "1",
        ])
        let destination = try #require(models.version(named: "ATDataModel 5"))
        #expect(destination.attribute(named: "automated", of: try #require(destination.entity(named: "ATMessage")))?.type == .boolean)
    }

    /// Version 4's store holds text messages and automated messages; after the step each is
    /// an `ATMessage` whose `automated` says which it was, on either path and engine.
    @Test(arguments: TestEngine.allCases, [false, true])
    func theStoreMigratesWithBooleansFromNumbers(engine: TestEngine, streamed: Bool) async throws {
        let models = try Self.models()
        let mapping = try MappingModel(contentsOf: Self.mapping, versions: models)
        let chain = streamed
            ? try MigrationChain(StreamedVersion.self, models: models, mappingModels: [mapping])
            : try MigrationChain(Version.self, models: models, mappingModels: [mapping])
        let before = try Data(contentsOf: Self.store)
        let folder = try ScenarioFolder()
        let copy = folder.url.appendingPathComponent("store.sqlite")
        try FileManager.default.copyItem(at: Self.store, to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
        // What the rows were, by the names version 4 numbers its entities with.
        let kinds = try await storeRows(.sqlite(copy.path), """
            SELECT r.ZPENDINGMESSAGEID, k.Z_NAME FROM ZATRECORD r JOIN Z_PRIMARYKEY k ON k.Z_ENT = r.Z_ENT
            WHERE k.Z_NAME IN ('ATTextMessage', 'ATAutomatedMessage') ORDER BY r.Z_PK
            """)
        try #require(Set(kinds.map { $0[1] }) == [.text("ATTextMessage"), .text("ATAutomatedMessage")], "\(kinds)")
        try await engine.withStoreURL { url in
            switch engine {
            case .sqlite:
                try FileManager.default.copyItem(atPath: copy.path, toPath: try #require(url.filePath))
            case .postgres:
                _ = try await StoreCopy.copy(from: .sqlite(copy.path), to: url, versions: models, logger: testLogger)
            }
            let (plan, _) = try await Scenario.migrate(chain, store: url, to: "ATDataModel 5")
            let step = try #require(plan.steps.last)
            #expect(step.destination.name == "ATDataModel 5")
            #expect((step.strategy == .streamed) == streamed, "\(step.strategy)")
            // Each message, found by its pendingMessageID, says which kind it was.
            let context = try await Scenario.open(try #require(models.version(named: "ATDataModel 5")), at: url)
            let messages = try await Scenario.all("ATMessage", in: context)
            var automated: [String: AttributeValue] = [:]
            for message in messages {
                if let id = message.value(forKey: "pendingMessageID").stringValue { automated[id] = message.value(forKey: "automated") }
            }
            for row in kinds {
                guard case .text(let id) = row[0] else { Issue.record("a message without pendingMessageID: \(row)"); continue }
                #expect(automated[id] == .bool(row[1] == .text("ATAutomatedMessage")), "message \(id)")
            }
        }
        #expect(try Data(contentsOf: Self.store) == before, "the fixture is unchanged")
    }
}
