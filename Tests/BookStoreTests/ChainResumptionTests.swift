import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// A chain killed in its second streamed step continues it from its last chunk: BookStore
/// 2 → 5 as it ships (the renames in place, then 3 → 4 and 4 → 5 streamed, their hooks
/// declaring their values), 4 500 generated books and the catalogue, ten publications a
/// batch, ten batches a chunk.
///
/// On SQLite the steps run on files beside the store: the next run takes the finished
/// output of 3 → 4 that the killed run left as it is, and continues 4 → 5 from it. On
/// PostgreSQL each step commits: the next run starts at BookStore 4 and continues 4 → 5.
/// Either way the store ends row for row what the design gives.
@Suite(.serialized) struct ChainResumptionTests {
    static let books = 4_500
    static let batchSize = 10

    @Test(arguments: TestEngine.allCases)
    func aChainKilledInItsSecondStreamedStepContinuesIt(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 2) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 2, to: 5)
            try await Self.kill(url, at: .rowsCreated(step: 3, entityMapping: "PublicationToPublication", rows: 1_000))
            let (lines, created) = try await Self.migrate(url)
            let notices = lines.filter { $0.hasPrefix("notice") }
            switch engine {
            case .sqlite:
                #expect(
                    notices.contains { $0.contains("step 2/3 BookStore 3 → BookStore 4 was finished by an interrupted run") },
                    "\(notices)"
                )
                #expect(notices.contains { $0.contains("resuming step 3/3 BookStore 4 → BookStore 5 at batch 101 of ") }, "\(notices)")
                // 3 → 4 made nothing again; 4 → 5 only the chunks after the tenth.
                #expect(created[2] == nil, "\(created)")
                #expect(created[3]?.first == 1_100, "\(created)")
            case .postgres:
                #expect(notices.contains { $0.contains("resuming step 1/1 BookStore 4 → BookStore 5 at batch 101 of ") }, "\(notices)")
                #expect(created[1]?.first == 1_100, "\(created)")
            }
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// Killed right after 3 → 4 was finished, before 4 → 5 wrote anything: its output is
    /// taken as it is, and 4 → 5 starts from its first row.
    @Test(arguments: TestEngine.allCases)
    func aChainKilledBetweenItsStreamedStepsDoesNotRepeatTheFirst(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 2) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 2, to: 5)
            try await Self.kill(url, at: .stepFinished(step: 2))
            let (lines, created) = try await Self.migrate(url)
            let notices = lines.filter { $0.hasPrefix("notice") }
            switch engine {
            case .sqlite:
                #expect(
                    notices.contains { $0.contains("step 2/3 BookStore 3 → BookStore 4 was finished by an interrupted run") },
                    "\(notices)"
                )
                #expect(created[2] == nil, "\(created)")
                #expect(created[3]?.first == 100, "\(created)")
            case .postgres:
                #expect(created[1]?.first == 100, "\(created)")
            }
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// Killed while the migrated store replaced the store (on SQLite, the last file complete,
    /// not yet copied in): the next run takes that file as it is, and neither streamed step
    /// runs again. (On PostgreSQL the swap of 4 → 5 rolls back: the store is at BookStore 4.)
    @Test(arguments: TestEngine.allCases)
    func aChainKilledWhileReplacingTheStoreRunsNoStepAgain(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 2) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 2, to: 5)
            try await Self.kill(url, at: .swapping(step: 3))
            let (lines, created) = try await Self.migrate(url)
            let notices = lines.filter { $0.hasPrefix("notice") }
            switch engine {
            case .sqlite:
                #expect(
                    notices.contains {
                        $0.contains("steps 2/3 BookStore 3 → BookStore 4 to 3/3 BookStore 4 → BookStore 5 were finished by an interrupted run")
                    },
                    "\(notices)"
                )
                #expect(created.isEmpty, "\(created)")
            case .postgres:
                #expect(created[1]?.first == 100, "\(created)")
            }
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// A write after the kill: the finished output no longer describes the store, and the
    /// chain starts again with the write in (on PostgreSQL, at BookStore 4, where the store is).
    @Test(arguments: TestEngine.allCases)
    func aStoreWrittenToSinceTheKillMakesTheFirstStepAgain(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 2) { url in
            try await Self.kill(url, at: .rowsCreated(step: 3, entityMapping: "PublicationToPublication", rows: 1_000))
            let version = try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 4" ? 4 : 2
            #expect(version == (engine == .sqlite ? 2 : 4))
            try await Self.retitleFirstTitle(url, version: version)
            let expected = try await ExpectedBookStore.migrating(url, from: version, to: 5)

            let (lines, created) = try await Self.migrate(url)
            let notices = lines.filter { $0.hasPrefix("notice") }
            #expect(!notices.contains { $0.contains("was finished by an interrupted run") || $0.contains("resuming") }, "\(notices)")
            switch engine {
            case .sqlite:
                #expect(created[2]?.first == 100, "\(created)")
                #expect(created[3]?.first == 100, "\(created)")
            case .postgres:
                #expect(created[1]?.first == 100, "\(created)")
            }
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    // MARK: Helpers

    /// Writes to the store as another process would after a kill: the first book or
    /// publication by title is retitled, through the framework at the store's `version`.
    static func retitleFirstTitle(_ url: StoreURL, version: Int) async throws {
        let store = try await PersistentStore.open(url, model: try loadModels().model(version: version), logger: quietLogger)
        let context = ManagedObjectContext(store: store, logger: quietLogger)
        var request = FetchRequest(entityName: version < 3 ? "Book" : "Publication")
        request.sortDescriptors = [FetchRequest.SortDescriptor(key: "title")]
        request.fetchLimit = 1
        let first = try #require(try await context.fetch(request).first)
        first.setValue(.string("Édition révisée, 2ᵉ tirage"), forKey: "title")
        try await context.save()
        await store.close()
    }

    static func kill(_ url: StoreURL, at checkpoint: MigrationCheckpoint) async throws {
        try await StepResumptionTests.kill(url, at: checkpoint, batchSize: batchSize, hooks: .declaredValues)
    }

    static func migrate(_ url: StoreURL) async throws -> (lines: [String], created: [Int: [Int]]) {
        try await StepResumptionTests.migrateCountingSteps(url, batchSize: batchSize, hooks: .declaredValues)
    }
}
