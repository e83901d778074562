import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// Records, in order, each source instance associated and each report of instances written.
class BatchOrderManager: MigrationManager, @unchecked Sendable {
    enum Event: Equatable, CustomStringConvertible {
        case associated(source: Int64)
        case written(Int)

        var description: String {
            switch self {
            case .associated(let source): "associated \(source)"
            case .written(let done): "written \(done)"
            }
        }
    }

    let events = Mutex<[Event]>([])

    /// The associate hook reads its pair only.
    override class var fetchesFromStores: Bool { false }

    override func associate(sourceInstance: ManagedObject, withDestinationInstance destination: ManagedObject, for mapping: EntityMapping) {
        events.withLock { $0.append(.associated(source: sourceInstance.objectID.primaryKey ?? -1)) }
        super.associate(sourceInstance: sourceInstance, withDestinationInstance: destination, for: mapping)
    }

    override func progressDidChange(_ progress: MigrationProgress) {
        if progress.stage == .createInstances { events.withLock { $0.append(.written(progress.instancesDone)) } }
        super.progressDidChange(progress)
    }
}

/// The same, not saying that it leaves the stores alone.
final class FetchingBatchOrderManager: BatchOrderManager, @unchecked Sendable {
    override class var fetchesFromStores: Bool { true }
}

/// The objects look-up of ``AuthorLookupAcrossBatchesTests``, declared not to read the
/// stores: its batches are made while the one before is written, and a batch links its books
/// to authors that the batch being written inserted.
final class PipelinedAuthorObjectsLookupPolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override class var fetchesFromStores: Bool { false }
}

/// The same, changing what earlier batches made: a placeholder author made with the first
/// book is deleted with the first book of the next batch, while the first batch is written,
/// and once every book is made each author's name gets a mark, and so does the title of
/// the last book (made by the last batch, whose write has just ended).
final class PipelinedAuthorEditsPolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override class var fetchesFromStores: Bool { false }
    static let placeholder = "Placeholder ✎"
    static let mark = " ✓"

    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let books = manager.userInfo.withValues { values -> Int in
            let books = (values["books"] as? Int ?? 0) + 1
            values["books"] = books
            return books
        }
        manager.userInfo["last book"] = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source]).first
        if books == 1 {
            let placeholder = try manager.destinationContext.insertObject(entityName: "Author")
            placeholder.setValue(.string(Self.placeholder), forKey: "name")
            manager.userInfo["placeholder"] = placeholder
        } else if books == manager.configuration.batchSize + 1, let placeholder = manager.userInfo["placeholder"] as? ManagedObject {
            manager.destinationContext.delete(placeholder)
            manager.userInfo["placeholder"] = nil
        }
    }

    override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) async throws {
        let authors = manager.userInfo["authors"] as? [String: ManagedObject] ?? [:]
        for (name, author) in authors { author.setValue(.string(name + Self.mark), forKey: "name") }
        if let book = manager.userInfo["last book"] as? ManagedObject {
            book.setValue(.string((book.value(forKey: "title").stringValue ?? "") + Self.mark), forKey: "title")
        }
        try await super.endInstanceCreation(forMapping: mapping, manager: manager)
    }
}

/// The objects look-up, declared not to read the stores, that reads an author's books all
/// the same: a to-many of an object an earlier batch made, which the store answers.
final class AuthorBooksReadingPolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override class var fetchesFromStores: Bool { false }

    override func author(named name: String, manager: MigrationManager) async throws -> ManagedObject {
        let author = try await super.author(named: name, manager: manager)
        _ = try await author.destinations(forKey: "books")
        return author
    }
}

@Suite struct BatchPipelineTests {
    /// A step whose policy and manager read only what they are given makes batch k + 1
    /// before batch k is reported written; one that may read the stores makes it after.
    @Test(arguments: TestEngine.allCases)
    func theNextBatchIsMadeWhileTheOneBeforeIsWrittenWhenNothingReadsTheStores(engine: TestEngine) async throws {
        let v1 = try MigrationProgressTests.model("Notes", noteAttributes: #"<attribute name="text" optional="YES" attributeType="String"/>"#)
        let v2 = try MigrationProgressTests.model(
            "Notes 2",
            noteAttributes:
                #"<attribute name="text" optional="YES" attributeType="String"/><attribute name="title" optional="YES" attributeType="String"/>"#
        )
        let mapping = MappingModel(
            name: "Notes1To2",
            source: v1,
            destination: v2,
            entityMappings: [
                EntityMapping(
                    name: "NoteToNote",
                    type: .copy,
                    sourceEntityName: "Note",
                    destinationEntityName: "Note",
                    attributeMappings: [
                        PropertyMapping(name: "text", valueExpression: .variable("source", keyPath: ["text"])),
                        PropertyMapping(name: "title", valueExpression: .variable("source", keyPath: ["text"])),
                    ]
                )
            ]
        )
        for managerType in [BatchOrderManager.self, FetchingBatchOrderManager.self] {
            try await engine.withStoreURL { url in
                try await engine.withStoreURL(fileName: "destination.sqlite") { destination in
                    try await makeClosedStore(at: url, model: v1) { container in
                        let context = container.newContext()
                        for index in 0..<30 { try context.insertObject(entityName: "Note").setValue(.string("Ñote \(index) €"), forKey: "text") }
                        try await context.save()
                    }
                    let manager = managerType.init(
                        configuration: .init(
                            sourceModel: v1,
                            destinationModel: v2,
                            mappingModel: mapping,
                            batchSize: 10,
                            logger: testLogger
                        )
                    )
                    try await manager.migrateStore(from: url, to: destination)

                    let events = manager.events.withLock { $0 }
                    let associated = events.compactMap { if case .associated(let source) = $0 { source } else { nil } }
                    #expect(associated.count == 30, "\(events)")
                    let eleventh = try #require(events.firstIndex(of: .associated(source: associated[10])))
                    let firstWritten = try #require(events.firstIndex(of: .written(10)), "\(events)")
                    if managerType.fetchesFromStores {
                        #expect(firstWritten < eleventh, "batch 2 is made once batch 1 is written: \(events)")
                    } else {
                        #expect(eleventh < firstWritten, "batch 2 is made while batch 1 is written: \(events)")
                    }
                    #expect(
                        events.filter { if case .written = $0 { true } else { false } } == [.written(10), .written(20), .written(30)],
                        "\(events)"
                    )

                    try await withOpenStore(destination, model: v2) { container in
                        let context = container.newContext()
                        let notes = try await context.fetch(FetchRequest(entityName: "Note"))
                        #expect(Set(notes.compactMap { $0.value(forKey: "title").stringValue }) == Set((0..<30).map { "Ñote \($0) €" }))
                        #expect(notes.allSatisfy { $0.value(forKey: "title") == $0.value(forKey: "text") })
                    }
                }
            }
        }
    }

    /// Authors kept across batches, each linked to more books while the batch that inserted
    /// it is written: one author per name with every book of that name, at a batch of one
    /// book (every batch pipelined against the one before) and of a thousand.
    @Test(arguments: TestEngine.allCases.flatMap { engine in [1, 1_000].map { (engine, $0) } })
    func authorsInsertedByTheBatchBeingWrittenKeepTheLinksTheNextBatchMakes(engine: TestEngine, batchSize: Int) async throws {
        try await engine.withStoreURL { url in
            let count = 2_500
            let progress = try await Self.migrateBooks(at: url, books: count, policy: PipelinedAuthorObjectsLookupPolicy.self, batchSize: batchSize)
            let batches = progress.filter { $0.entityMapping == "BookToBook" && $0.stage == .createInstances }.count
            #expect(batches == (count + Books.anonymous.count + batchSize - 1) / batchSize, "the books take many batches")
            try await Books.expectBooks2(at: url, books: count)
        }
    }

    /// What a pipelined policy changes in objects earlier batches made is saved: a delete
    /// made while the object's batch is written, and names set after the last batch.
    @Test(arguments: TestEngine.allCases.flatMap { engine in [1, 100].map { (engine, $0) } })
    func changesToObjectsOfEarlierBatchesAreSaved(engine: TestEngine, batchSize: Int) async throws {
        try await engine.withStoreURL { url in
            let count = 700
            _ = try await Self.migrateBooks(at: url, books: count, policy: PipelinedAuthorEditsPolicy.self, batchSize: batchSize)

            let context = try await Scenario.open(try Scenario.version("Books 2", of: try Books.models()), at: url)
            let authors = try await Scenario.all("Author", in: context)
            #expect(
                Scenario.strings(authors, "name") == Books.authors.map { $0 + PipelinedAuthorEditsPolicy.mark }.sorted(),
                "the placeholder deleted, every author renamed once"
            )
            for (index, name) in Books.authors.enumerated() {
                let author = try await Scenario.one("Author", "name", name + PipelinedAuthorEditsPolicy.mark, in: context)
                #expect(
                    Scenario.strings(try await author.destinations(forKey: "books"), "title") == Books.expectedTitles(ofAuthor: index, books: count)
                )
            }
            #expect(try await Scenario.count("Book", in: context) == count + Books.anonymous.count)
            let marked = try await Scenario.all("Book", in: context, where: "title ENDSWITH %@", .string(PipelinedAuthorEditsPolicy.mark))
            #expect(Scenario.strings(marked, "title") == [Books.anonymous.last! + PipelinedAuthorEditsPolicy.mark], "the last book made, and only it")
        }
    }

    /// Seeds `count` books at `url` and migrates them to Books 2 in one step with `policy`
    /// as the books' policy; returns the progress reported.
    static func migrateBooks(
        at url: StoreURL,
        books count: Int,
        policy: AuthorObjectsLookupPolicy.Type,
        batchSize: Int
    ) async throws -> [MigrationProgress] {
        try await Books.seed(at: url, books: count)
        var policies = Books.policies
        policies.register(policy, as: "BookToBookAuthorPolicy")
        let (plan, progress) = try await Scenario.migrate(try Books.chain(policies: policies), store: url, to: "Books 2", batchSize: batchSize)
        #expect(plan.steps.count == 1, "a step alone, whose batches are pipelined")
        return progress
    }

    /// A to-many of an object an earlier batch made, read while the batch before is
    /// written, would miss that batch: the migration stops saying so, the store unchanged.
    @Test(arguments: TestEngine.allCases)
    func aToManyReadOfAnEarlierBatchWhileOneIsWrittenIsRefused(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let error = await #expect(throws: (any Error).self) {
                _ = try await Self.migrateBooks(at: url, books: 100, policy: AuthorBooksReadingPolicy.self, batchSize: 10)
            }
            let message = error.map(String.init(describing:)) ?? ""
            #expect(
                message.contains("'books' of Author was read while a migration batch is written") && message.contains("fetchesFromStores"),
                "\(message)"
            )
            let context = try await Scenario.open(try Scenario.version("Books", of: try Books.models()), at: url)
            #expect(try await Scenario.count("Book", in: context) == 100 + Books.anonymous.count, "still the Books store it was")
        }
    }
}
