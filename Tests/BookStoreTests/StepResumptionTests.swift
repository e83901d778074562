import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// A streamed step stopped as a killed process stops continues, on the next run, from the
/// last batch it wrote, when the store was not written to since and the step is the same;
/// otherwise it starts again from its first row, saying why. Either way the store ends
/// row for row what the design gives (``ExpectedBookStore``).
///
/// BookStore 4 → 5 alone (one streamed step), 4 500 generated books and the catalogue at
/// the default batch size of 1 000: five batches of publications.
@Suite(.serialized) struct StepResumptionTests {
    static let books = 4_500
    static let killedAt = MigrationCheckpoint.rowsCreated(step: 1, entityMapping: "PublicationToPublication", rows: 2_000)

    @Test(arguments: TestEngine.allCases)
    func aKilledStepContinuesFromItsLastBatch(engine: TestEngine) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            try await Self.kill(url, at: Self.killedAt)
            let (lines, created) = try await Self.migrate(url)
            #expect(
                lines.contains { $0.contains("resuming step 1/1 BookStore 4 → BookStore 5 at batch 3 of 5 of PublicationToPublication") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            // The next batch written is the third: the first two were not made again.
            #expect(created.first == 3_000, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// Hooks that declare their values (BookStore's as it ships) write a chunk of ten
    /// batches per transaction: killed after the tenth chunk (1 000 rows at 10 a batch),
    /// the next run makes only the chunks after it.
    @Test(arguments: TestEngine.allCases)
    func aStepWithDeclaredValuesContinuesAfterItsLastChunk(engine: TestEngine) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            let killedAt = MigrationCheckpoint.rowsCreated(step: 1, entityMapping: "PublicationToPublication", rows: 1_000)
            try await Self.kill(url, at: killedAt, batchSize: 10, hooks: .declaredValues)
            let (lines, created) = try await Self.migrateCountingSteps(url, batchSize: 10, hooks: .declaredValues)
            #expect(
                lines.contains {
                    $0.contains("resuming step 1/1 BookStore 4 → BookStore 5 at batch 101 of ") && $0.contains(" of PublicationToPublication")
                },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            #expect(created[1]?.first == 1_100, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// Killed between two chunks of the pages' `INSERT … SELECT` (a chunk is fifty
    /// batches: 5 000 rows at 100 a batch): the next run inserts only the chunks after it.
    @Test(arguments: TestEngine.allCases)
    func aStepKilledWithinItsSQLInsertContinuesAfterItsLastChunk(engine: TestEngine) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            try await Self.kill(url, at: .rowsCreated(step: 1, entityMapping: "PageToPage", rows: 5_000), batchSize: 100)
            let (lines, created) = try await Self.migrateCountingSteps(url, entityMapping: "PageToPage", batchSize: 100)
            #expect(
                lines.contains { $0.contains("resuming step 1/1 BookStore 4 → BookStore 5 at batch 51 of ") && $0.contains(" of PageToPage") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            // One chunk left, reported with the rows of both.
            #expect(created[1]?.count == 1 && created[1]![0] > 5_000, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// Killed once every instance was written (in the relationship stage, which writes
    /// nothing here): the next run creates none again.
    @Test(arguments: TestEngine.allCases)
    func aStepKilledAfterItsInstancesCreatesNoneAgain(engine: TestEngine) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            try await Self.kill(url, at: .stageFinished(step: 1, stage: .createRelationships, entityMapping: "PageToPage"))
            let (lines, created) = try await Self.migrate(url)
            #expect(
                lines.contains { $0.contains("resuming step 1/1 BookStore 4 → BookStore 5 after PageToPage, PublicationToPublication") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            #expect(created.isEmpty, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// A write after the kill (the writers' lock went with the process): the step's output
    /// no longer describes the store, and the step starts again with the write in.
    @Test(arguments: TestEngine.allCases)
    func aStoreWrittenToSinceTheKillStartsTheStepAgain(engine: TestEngine) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            try await Self.kill(url, at: Self.killedAt)
            try await Self.retitleFirstPublication(url, version: 4)
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)

            let (lines, created) = try await Self.migrate(url)
            #expect(
                lines.contains {
                    $0.contains("starting step 1/1 BookStore 4 → BookStore 5 from its first row") && $0.contains("the store was written to since")
                },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            #expect(created.first == 1_000, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// Killed once the store was migrated, before the run removed what it made beside it:
    /// the store is current, and the next migration removes it, through the framework (a
    /// service's start-up) as through `bookstore migrate`, which finds nothing to do.
    @Test(arguments: TestEngine.allCases, [false, true])
    func aRunKilledAfterTheStoreWasMigratedLeavesNothingOnceMigratedAgain(engine: TestEngine, byCommand: Bool) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            try await Self.kill(url, at: .migrated)
            try await expectStore(url, atVersion: 5, holds: expected)
            if engine == .sqlite { #expect(!(try await StoreSnapshot(url).leftovers.isEmpty), "a killed run leaves its lock file and work folder") }
            if byCommand {
                let output = try await BookStoreProcess.running(["migrate", "--store", url.description, "--log-level", "notice"])
                #expect(output.status == 0, "\(output.stderr)")
                #expect(output.stdout.contains("nothing to do"), "\(output.stdout)")
            } else {
                let (lines, created) = try await Self.migrate(url)
                #expect(created.isEmpty)
                #expect(
                    engine == .postgres || lines.contains { $0.contains("removed what a migration killed after it migrated the store left") },
                    "\(lines)"
                )
            }
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// `migrate --plan` says what a kill would leave the next run: the step on its own is
    /// continued.
    @Test(arguments: TestEngine.allCases)
    func thePlanSaysTheStepIsContinuedAfterAKill(engine: TestEngine) async throws {
        try await Self.withStoreAtVersion4(engine) { url in
            let output = try await BookStoreProcess.running(["migrate", "--plan", "--store", url.description, "--log-level", "warning"])
            #expect(output.status == 0, "\(output.stderr)")
            let details = output.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                $0.hasPrefix("after a kill:")
            }
            #expect(
                details == ["after a kill: continued from its last batch, unless the store was written to since"],
                "\(output.stdout)"
            )
        }
    }

    /// The output says which step wrote it: another step, or the same one with another
    /// mapping, is another fingerprint; a policy that does not say it can continue keeps
    /// its step from continuing.
    @Test func aStepIsContinuedOnlyByItselfWithPoliciesThatSaySo() throws {
        let models = try loadModels()
        let migrator = try BookStoreMigration.migrator(models: models, logger: quietLogger)
        let (v3, v4, v5) = (try models.model(version: 3), try models.model(version: 4), try models.model(version: 5))
        let step34 = try migrator.step(from: v3, to: v4, dialect: SQLiteDialect())
        let step45 = try migrator.step(from: v4, to: v5, dialect: SQLiteDialect())
        #expect(step45.resumptionFingerprint == (try migrator.step(from: v4, to: v5, dialect: PostgresDialect())).resumptionFingerprint)
        #expect(step34.resumptionFingerprint != step45.resumptionFingerprint)
        #expect(step34.whyNotResumable(policies: BookStoreMigration.policies) == nil)
        #expect(step45.whyNotResumable(policies: BookStoreMigration.policies) == nil)

        var policies = MigrationPolicies()
        policies.register(CountingPolicy.self, as: "PublicationToPublicationMigrationPolicy")
        #expect(step34.whyNotResumable(policies: policies)?.contains("does not say it resumes") == true)
    }

    /// Keeps a count across batches: a new run would not have it.
    private final class CountingPolicy: EntityMigrationPolicy, @unchecked Sendable {}

    // MARK: Helpers

    static func withStoreAtVersion4(_ engine: TestEngine, _ body: (StoreURL) async throws -> Void) async throws {
        try await engine.withSeededStore(books: books, version: 4, body)
    }

    /// Writes to the store as another process would after a kill: the first publication by
    /// title is retitled, through the framework at the store's `version`.
    static func retitleFirstPublication(_ url: StoreURL, version: Int) async throws {
        let store = try await PersistentStore.open(url, model: try loadModels().model(version: version), logger: quietLogger)
        let context = ManagedObjectContext(store: store, logger: quietLogger)
        var request = FetchRequest(entityName: "Publication")
        request.sortDescriptors = [FetchRequest.SortDescriptor(key: "title")]
        request.fetchLimit = 1
        let publication = try #require(try await context.fetch(request).first)
        publication.setValue(.string("Édition révisée, 2ᵉ tirage"), forKey: "title")
        try await context.save()
        await store.close()
    }

    /// Migrates until `checkpoint`, then stops as a killed process does.
    /// `hooks`: whole objects by default, whose batches are what these tests count.
    static func kill(
        _ url: StoreURL,
        at checkpoint: MigrationCheckpoint,
        batchSize: Int = 1_000,
        hooks: BookStoreMigration.Hooks = .wholeObjects
    ) async throws {
        let reached = Mutex(false)
        let chain = try BookStoreMigration.chain(models: try loadModels(), hooks: hooks)
        let migrator = ProgressiveMigrator(chain: chain, batchSize: batchSize, logger: quietLogger) {
            passed in
            guard passed == checkpoint else { return }
            reached.withLock { $0 = true }
            throw MigrationAbort()
        }
        await #expect(throws: MigrationAbort.self) { try await migrator.migrateStore(at: url) }
        #expect(reached.withLock { $0 })
    }

    /// Migrates to the end; returns the log and the rows of publications the run reported
    /// created by step `step` (numbered as the plan does), batch by batch.
    static func migrate(_ url: StoreURL, step: Int = 1) async throws -> (lines: [String], created: [Int]) {
        let (lines, created) = try await migrateCountingSteps(url)
        return (lines, created[step] ?? [])
    }

    /// ``migrate(_:step:)`` for every step: the rows of publications each step reported
    /// created, by step number.
    static func migrateCountingSteps(
        _ url: StoreURL,
        entityMapping: String = "PublicationToPublication",
        batchSize: Int = 1_000,
        hooks: BookStoreMigration.Hooks = .wholeObjects
    ) async throws -> (lines: [String], created: [Int: [Int]]) {
        let recorder = LogRecorder()
        let created = Mutex<[Int: [Int]]>([:])
        let migrator = ProgressiveMigrator(
            chain: try BookStoreMigration.chain(models: try loadModels(), hooks: hooks),
            batchSize: batchSize,
            logger: recorder.logger
        ) { passed in
            if case .rowsCreated(let step, entityMapping, let rows) = passed { created.withLock { $0[step, default: []].append(rows) } }
        }
        try await migrator.migrateStore(at: url)
        return (recorder.all, created.withLock { $0 })
    }
}
