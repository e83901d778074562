import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

enum NotesVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Notes"
    case v2 = "Notes 2"

    var modelName: String { rawValue }

    func nextVersion() -> NotesVersion? { self == .v1 ? .v2 : nil }
}

/// Progress of a step that runs several mapping models, one after the other.
@Suite struct MigrationProgressTests {
    static func model(_ name: String, noteAttributes: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            xml: Data(
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                    <entity name="Note" syncable="YES">\(noteAttributes)</entity>
                    <entity name="Tag" syncable="YES"><attribute name="name" optional="YES" attributeType="String"/></entity>
                </model>
                """.utf8
            ),
            name: name
        )
    }

    @Test(arguments: TestEngine.allCases)
    func aStepOfTwoMappingModelsReportsProgressThatNeverGoesBack(engine: TestEngine) async throws {
        let v1 = try Self.model("Notes", noteAttributes: #"<attribute name="text" optional="YES" attributeType="String"/>"#)
        let v2 = try Self.model(
            "Notes 2",
            noteAttributes:
                #"<attribute name="text" optional="YES" attributeType="String"/><attribute name="title" optional="YES" attributeType="String"/>"#
        )
        let versions = try VersionedModel(name: "Notes", versions: [v1, v2], currentVersionName: "Notes 2")
        let source = PropertyMapping(name: "text", valueExpression: .variable("source", keyPath: ["text"]))
        let title = PropertyMapping(name: "title", valueExpression: .variable("source", keyPath: ["text"]))
        let name = PropertyMapping(name: "name", valueExpression: .variable("source", keyPath: ["name"]))
        let chain = try MigrationChain(
            NotesVersion.self,
            models: versions,
            mappingModels: [
                MappingModel(
                    name: "Notes1To2 B",
                    source: v1,
                    destination: v2,
                    entityMappings: [
                        EntityMapping(name: "TagToTag", type: .copy, sourceEntityName: "Tag", destinationEntityName: "Tag", attributeMappings: [name])
                    ]
                ),
                MappingModel(
                    name: "Notes1To2 A",
                    source: v1,
                    destination: v2,
                    entityMappings: [
                        EntityMapping(
                            name: "NoteToNote",
                            type: .transform,
                            sourceEntityName: "Note",
                            destinationEntityName: "Note",
                            attributeMappings: [source, title]
                        )
                    ]
                ),
            ]
        )

        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for index in 0..<30 { try context.insertObject(entityName: "Note").setValue(.string("note \(index)"), forKey: "text") }
                for index in 0..<20 { try context.insertObject(entityName: "Tag").setValue(.string("tag \(index)"), forKey: "name") }
                try await context.save()
            }

            let migrator = ProgressiveMigrator(chain: chain, logger: testLogger)
            let updates = migrator.progressUpdates()
            let collector = Task { await updates.reduce(into: [MigrationProgress]()) { $0.append($1) } }
            let handed = Mutex<[MigrationProgress]>([])
            let plan = try await migrator.migrateStore(at: url) { progress in handed.withLock { $0.append(progress) } }
            let reports = await collector.value

            // The handler gets each report the stream does, in the same order.
            #expect(handed.withLock { $0 } == reports)

            // In the order the chain was given them, not by name.
            #expect(plan.steps.map { $0.mappingModels.map(\.name) } == [["Notes1To2 B", "Notes1To2 A"]])
            #expect(reports.count > 2, "\(reports)")
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted }, "\(reports)")
            #expect(reports.filter { $0.stage == .finished }.count == 1)
            #expect(reports.last?.stage == .finished && reports.last?.fractionCompleted == 1)
            #expect(reports.allSatisfy { $0.fractionCompleted == $0.stepFractionCompleted })
            // The first mapping model (TagToTag) fills the first half, the second the rest.
            let tags = reports.filter { $0.entityMapping == "TagToTag" }
            let notes = reports.filter { $0.entityMapping == "NoteToNote" }
            #expect(!tags.isEmpty && !notes.isEmpty, "reports for both mappings: \(reports)")
            #expect(tags.allSatisfy { $0.fractionCompleted <= 0.5 })
            #expect(notes.allSatisfy { $0.fractionCompleted >= 0.5 })

            try await expectNoLeftovers(url)
            try await withOpenStore(url, model: v2) { container in
                let context = container.newContext()
                let titled = try await context.count(for: FetchRequest(entityName: "Note", predicate: try Predicate(format: "title == text")))
                #expect(titled == 30)
                #expect(try await context.count(for: FetchRequest(entityName: "Tag")) == 20)
            }
        }
    }

    /// A manager run on its own holds its run only while it runs: during it, the entity
    /// mapping it is at; after it, none, and its progress is complete.
    @Test(arguments: TestEngine.allCases)
    func aManagerHoldsItsRunOnlyWhileItRuns(engine: TestEngine) async throws {
        let v1 = try Self.model("Notes", noteAttributes: #"<attribute name="text" optional="YES" attributeType="String"/>"#)
        let v2 = try Self.model(
            "Notes 2",
            noteAttributes:
                #"<attribute name="text" optional="YES" attributeType="String"/><attribute name="title" optional="YES" attributeType="String"/>"#
        )
        try await engine.withStoreURL { url in
            try await engine.withStoreURL(fileName: "destination.sqlite") { destination in
                try await makeClosedStore(at: url, model: v1) { container in
                    let context = container.newContext()
                    for index in 0..<5 { try context.insertObject(entityName: "Note").setValue(.string("note \(index)"), forKey: "text") }
                    try await context.save()
                }
                let manager = WatchingManager(
                    configuration: .init(
                        sourceModel: v1,
                        destinationModel: v2,
                        mappingModel: try MappingModel.inferred(from: v1, to: v2),
                        logger: testLogger
                    )
                )
                #expect(manager.currentEntityMapping == nil && manager.migrationProgress == 0)
                try await manager.migrateStore(from: url, to: destination)
                #expect(manager.seen.withLock { $0 }.contains("NoteToNote"), "\(manager.seen.withLock { $0 })")
                #expect(manager.currentEntityMapping == nil)
                #expect(manager.migrationProgress == 1)
            }
        }
    }
}

/// Records the entity mapping its run is at with each report.
final class WatchingManager: MigrationManager, @unchecked Sendable {
    let seen = Mutex<Set<String>>([])

    override func progressDidChange(_ progress: MigrationProgress) {
        if let name = currentEntityMapping?.name { seen.withLock { _ = $0.insert(name) } }
        super.progressDidChange(progress)
    }
}
