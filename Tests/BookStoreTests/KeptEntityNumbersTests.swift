import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// An in-place step that a streamed step follows leaves the renumbering to it. BookStore
/// 2 → 3 renames `Book` to `Publication`; a new BookStore 3 store numbers `Page` 1 and
/// `Publication` 2 (by name), where a BookStore 2 store has `Book` 1 and `Page` 2. Renumbered,
/// every row of both tables would be written, and written again by step 3 → 4; kept, the
/// step renames and writes no row, and step 3 → 4 numbers every row as a new store.
@Suite struct KeptEntityNumbersTests {
    static let books = 300

    @Test(arguments: TestEngine.allCases)
    func theRenameBeforeAStreamedStepWritesNoRowAndTheChainEndsNumberedAsANewStore(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 2) { url in
            let before = try await MigrationFaultTests.tableContents(url, includingMetadata: true)
            let numbers = try await ExpectedBookStore.entityNumbers(url, version: 2)
            #expect(numbers.publication == [1] && numbers.page == [2], "a BookStore 2 store numbers Book 1, Page 2")
            // Between the steps the rows keep the numbers the test read; at the end, the design's.
            let atVersion3 = try await ExpectedBookStore.migrating(url, from: 2, to: 3, entities: numbers)
            let atVersion5 = try await ExpectedBookStore.migrating(url, from: 2, to: 5)

            let models = try loadModels()
            let migrator = try BookStoreMigration.migrator(models: models, logger: quietLogger)
            let plan = try await migrator.plan(forStoreAt: url)
            #expect(plan.steps.map(\.strategy) == [.inPlace, .streamed, .streamed])
            #expect(plan.steps[0].keepsEntityNumbers)
            guard case .inPlace(let rename) = plan.steps[0].work else { return }
            #expect(!rename.statements.contains { $0.hasPrefix("UPDATE") }, "a row is rewritten: \(rename.statements)")
            #expect(
                !rename.statements.contains { $0.hasPrefix("CREATE INDEX") || $0.hasPrefix("DROP INDEX") },
                "an index is built again: \(rename.statements)"
            )
            // Where the step is the last, it numbers the store as a new BookStore 3 store.
            let toVersion3 = try await migrator.plan(forStoreAt: url, to: "BookStore 3")
            #expect(toVersion3.steps.count == 1 && !toVersion3.steps[0].keepsEntityNumbers)

            // Stopped after the rename, as a killed process: on PostgreSQL the step is
            // committed, the store at BookStore 3 numbered as it was; on SQLite the chain
            // ran on a copy, and the store is as it was.
            let reached = Mutex(false)
            let stopping = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: models), logger: quietLogger) { checkpoint in
                guard checkpoint == .stepFinished(step: 1) else { return }
                reached.withLock { $0 = true }
                throw MigrationAbort()
            }
            await #expect(throws: MigrationAbort.self) { try await stopping.migrateStore(at: url) }
            #expect(reached.withLock { $0 })
            if engine == .sqlite {
                #expect(try await MigrationFaultTests.tableContents(url, includingMetadata: true) == before, "the store changed")
            } else {
                try await expectStore(url, atVersion: 3, holds: atVersion3)
                try await Self.expectReadable(url, version: try models.model(version: 3), publications: before["ZBOOK"]?.count ?? -1)
            }

            try await migrator.migrateStore(at: url)
            try await expectStore(url, atVersion: 5, holds: atVersion5)
            try await expectNoLeftovers(url)
        }
    }

    /// The store opens at `version` and its objects are found through the numbers its
    /// `Z_PRIMARYKEY` gives: every publication, each page's publication.
    static func expectReadable(_ url: StoreURL, version: ManagedObjectModel, publications: Int) async throws {
        let store = try await PersistentStore.open(url, model: version, options: .readOnly, logger: quietLogger)
        let context = ManagedObjectContext(store: store, logger: quietLogger)
        #expect(try await context.count(for: FetchRequest(entityName: "Publication")) == publications)
        var request = FetchRequest(entityName: "Page", predicate: try Predicate(format: "publication != nil"))
        request.fetchLimit = 5
        for page in try await context.fetch(request) {
            let publication = try #require(try await page.destination(forKey: "publication"))
            #expect(publication.entity.name == "Publication")
        }
        await store.close()
    }
}
