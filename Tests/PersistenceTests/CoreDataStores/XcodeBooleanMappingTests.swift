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

    enum Version: String, MigrationVersion, CaseIterable {
        case v4 = "ATDataModel 4"
        case v5 = "ATDataModel 5"
        var modelName: String { rawValue }
        func nextVersion() -> Version? { self == .v4 ? .v5 : nil }
    }

    /// The same two steps, run by a manager subclass: such a step goes object by object
    /// through the Swift evaluator rather than SQL.
    enum StreamedVersion: String, MigrationVersion, CaseIterable {
        case v4 = "ATDataModel 4"
        case v5 = "ATDataModel 5"
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
        #expect(
            Dictionary(uniqueKeysWithValues: automated) == [
                "ATTextMessageToATMessage": "0", "ATFileMessageToATMessage": "0", "ATAutomatedMessageToATMessage": "1",
            ]
        )
        let destination = try #require(models.version(named: "ATDataModel 5"))
        #expect(destination.attribute(named: "automated", of: try #require(destination.entity(named: "ATMessage")))?.type == .boolean)
    }

    /// A store of version 4 with text and automated messages (the fixture's own v4 store is
    /// not recognised by its version hashes, so one is made from the model); after the step
    /// each is an `ATMessage` whose `automated` says which it was, on either path and engine.
    @Test(arguments: TestEngine.allCases, [false, true])
    func theStoreMigratesWithBooleansFromNumbers(engine: TestEngine, streamed: Bool) async throws {
        let models = try Self.models()
        let mapping = try MappingModel(contentsOf: Self.mapping, versions: models)
        let chain =
            streamed
            ? try MigrationChain(StreamedVersion.self, models: models, mappingModels: [mapping])
            : try MigrationChain(Version.self, models: models, mappingModels: [mapping])
        let kinds = [
            ("text-1", "ATTextMessage"), ("automated-1", "ATAutomatedMessage"), ("text-2", "ATTextMessage"), ("automated-2", "ATAutomatedMessage"),
        ]
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: try #require(models.version(named: "ATDataModel 4"))) { container in
                let context = container.newContext()
                for (id, entity) in kinds {
                    try context.insertObject(entityName: entity).setValue(.string(id), forKey: "pendingMessageID")
                }
                try await context.save()
            }
            let (plan, _) = try await Scenario.migrate(chain, store: url, to: "ATDataModel 5")
            let step = try #require(plan.steps.last)
            #expect(step.destination.name == "ATDataModel 5")
            #expect((step.strategy == .streamed) == streamed, "\(step.strategy)")
            // Each message, found by its pendingMessageID, says which kind it was.
            let context = try await Scenario.open(try #require(models.version(named: "ATDataModel 5")), at: url)
            var automated: [String: AttributeValue] = [:]
            for message in try await Scenario.all("ATMessage", in: context) {
                if let id = message.value(forKey: "pendingMessageID").stringValue { automated[id] = message.value(forKey: "automated") }
            }
            #expect(automated.count == kinds.count)
            for (id, entity) in kinds {
                #expect(automated[id] == .bool(entity == "ATAutomatedMessage"), "message \(id)")
            }
        }
    }
}

extension XcodeBooleanMappingTests {
    /// Beyond Xcode's 0 and 1: any number is a Boolean as NSNumber's `boolValue` has it.
    @Test(arguments: [
        (AttributeValue.integer(0), AttributeValue.bool(false)), (.integer(2), .bool(true)), (.integer(-1), .bool(true)),
        (.double(0.5), .bool(true)), (.double(0), .bool(false)), (.decimal(0), .bool(false)), (.null, .null),
    ])
    func aNumberFillsABooleanAsCoreDataHasIt(value: AttributeValue, expected: AttributeValue) {
        #expect(MigrationManager.boolean(value, for: AttributeDescription(name: "automated", type: .boolean)) == expected)
        #expect(MigrationManager.boolean(value, for: AttributeDescription(name: "count", type: .integer32)) == value, "only Booleans")
    }
}
