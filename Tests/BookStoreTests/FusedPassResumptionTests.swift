import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// A fused pass stopped as a killed process stops continues, on the next run, from the last
/// batch its second step wrote: the first step's handed objects are in no output of its
/// own, so it hands over again only what follows them. Otherwise the pass starts again,
/// saying why. Either way the store ends row for row what the design gives.
///
/// BookStore 3 → 4 → 5 (one pass, publications carried in memory), 4 500 generated books and
/// the catalogue at the default batch size of 1 000: five batches of publications.
@Suite(.serialized) struct FusedPassResumptionTests {
    static let books = 4_500
    static let pass = "steps 1+2/2 BookStore 3 → BookStore 4, BookStore 4 → BookStore 5"
    /// The publications a step reports created after each batch: the generated books and
    /// the catalogue's four.
    static let allBatches = [1_000, 2_000, 3_000, 4_000, 4_504]
    static let lastThreeBatches = Array(allBatches.dropFirst(2))

    @Test(arguments: TestEngine.allCases)
    func aKilledPassContinuesFromTheLastBatchOfItsSecondStep(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 3) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 3, to: 5)
            try await StepResumptionTests.kill(url, at: .rowsCreated(step: 2, entityMapping: "PublicationToPublication", rows: 2_000))
            let (lines, created) = try await StepResumptionTests.migrateCountingSteps(url)
            #expect(
                lines.contains { $0.contains("resuming \(Self.pass) at batch 3 of 5 of PublicationToPublication") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            // From the third batch on, by both steps, in one pass: the first two were neither
            // handed over nor written again, and the pass did not fall back to step by step.
            #expect(created == [1: Self.lastThreeBatches, 2: Self.lastThreeBatches], "\(created)")
            try await expectFinishedInOnePass(url, lines: lines, holds: expected)
        }
    }

    /// BookStore 2 → 3 runs in place first. On SQLite the pass reads a copy of the store
    /// migrated in place, made again by the next run: it is the same copy, key for key, of
    /// the same store, and the pass is continued as if it read the store. (On PostgreSQL
    /// the in-place step is in the store when the pass begins; the next run starts at 3.)
    @Test(arguments: TestEngine.allCases)
    func aPassAfterAnInPlaceStepContinuesToo(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 2) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 2, to: 5)
            try await StepResumptionTests.kill(url, at: .rowsCreated(step: 3, entityMapping: "PublicationToPublication", rows: 2_000))
            let (lines, createdBySteps) = try await StepResumptionTests.migrateCountingSteps(url)
            let pass = engine == .sqlite ? "steps 2+3/3 BookStore 3 → BookStore 4, BookStore 4 → BookStore 5" : Self.pass
            #expect(
                lines.contains { $0.contains("resuming \(pass) at batch 3 of 5 of PublicationToPublication") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            let created = createdBySteps[createdBySteps.keys.max() ?? 0] ?? []
            #expect(created == Self.lastThreeBatches, "\(createdBySteps)")
            try await expectFinishedInOnePass(url, lines: lines, holds: expected)
        }
    }

    /// Killed once the second step's pages were in, while the first step was handing its
    /// first publications over: the pages are not copied again, the publications are
    /// handed over from the first.
    @Test(arguments: TestEngine.allCases)
    func aPassKilledBeforeItsFirstCarriedBatchHandsOverFromTheFirst(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 3) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 3, to: 5)
            try await StepResumptionTests.kill(url, at: .stageFinished(step: 2, stage: .createInstances, entityMapping: "PageToPage"))
            let (lines, created) = try await StepResumptionTests.migrateCountingSteps(url)
            #expect(lines.contains { $0.contains("resuming \(Self.pass) after PageToPage") }, "\(lines.filter { $0.hasPrefix("notice") })")
            #expect(created == [1: Self.allBatches, 2: Self.allBatches], "\(created)")
            try await expectFinishedInOnePass(url, lines: lines, holds: expected)
        }
    }

    /// Killed between two chunks of the first step's pages (`INSERT … SELECT` into its
    /// intermediate store, fifty batches a chunk), before the second step began its output:
    /// the first step inserts only the chunks after it, the second starts from its first row.
    @Test(arguments: TestEngine.allCases)
    func aPassKilledWithinItsFirstStepsSQLContinuesAfterItsLastChunk(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 3) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 3, to: 5)
            try await StepResumptionTests.kill(url, at: .rowsCreated(step: 1, entityMapping: "PageToPage", rows: 5_000), batchSize: 100)
            let (lines, pages) = try await StepResumptionTests.migrateCountingSteps(url, entityMapping: "PageToPage", batchSize: 100)
            #expect(
                lines.contains { $0.contains("resuming \(Self.pass) at batch 51 of ") && $0.contains(" of PageToPage") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            // The first step's one chunk left, reported with the rows of both; the second
            // step's pages in chunks from its first.
            #expect(pages[1]?.count == 1 && pages[1]![0] > 5_000 && pages[2]?.first == 5_000, "\(pages)")
            try await expectFinishedInOnePass(url, lines: lines, holds: expected)
        }
    }

    /// Killed once every instance of both steps was written: the next run creates none.
    @Test(arguments: TestEngine.allCases)
    func aPassKilledAfterItsInstancesCreatesNoneAgain(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 3) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 3, to: 5)
            try await StepResumptionTests.kill(
                url,
                at: .stageFinished(step: 2, stage: .createRelationships, entityMapping: "PublicationToPublication")
            )
            let (lines, created) = try await StepResumptionTests.migrateCountingSteps(url)
            #expect(
                lines.contains { $0.contains("resuming \(Self.pass) after PageToPage, PublicationToPublication") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            // Neither step: the first hands nothing over, the second makes nothing.
            #expect(created.isEmpty, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// A write after the kill: the outputs no longer describe the store, and the pass
    /// starts again with the write in.
    @Test(arguments: TestEngine.allCases)
    func aStoreWrittenToSinceTheKillStartsThePassAgain(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 3) { url in
            try await StepResumptionTests.kill(url, at: .rowsCreated(step: 2, entityMapping: "PublicationToPublication", rows: 2_000))
            try await StepResumptionTests.retitleFirstPublication(url, version: 3)
            let expected = try await ExpectedBookStore.migrating(url, from: 3, to: 5)

            let (lines, created) = try await StepResumptionTests.migrate(url, step: 2)
            #expect(
                lines.contains { $0.contains("starting \(Self.pass) from their first row") && $0.contains("the store was written to since") },
                "\(lines.filter { $0.hasPrefix("notice") })"
            )
            #expect(created.first == 1_000, "\(created)")
            try await expectNoLeftovers(url)
            try await expectStore(url, atVersion: 5, holds: expected)
        }
    }

    /// The run kept to one pass (no fall-back to step by step), left nothing beside the
    /// store, and the store holds what a run never killed makes.
    private func expectFinishedInOnePass(
        _ url: StoreURL,
        lines: [String],
        holds expected: ExpectedBookStore,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(!lines.contains { $0.contains("steps run one after the other") }, sourceLocation: sourceLocation)
        try await expectNoLeftovers(url, sourceLocation: sourceLocation)
        try await expectStore(url, atVersion: 5, holds: expected, sourceLocation: sourceLocation)
    }

    /// A step's output in a fused pass is another fingerprint than the step's alone, and
    /// the two steps' differ: neither run continues what the other left.
    @Test func aFusedStepsOutputIsContinuedOnlyByTheSamePass() throws {
        let models = try loadModels()
        let migrator = try BookStoreMigration.migrator(models: models, hooks: .wholeObjects, logger: quietLogger)
        let (v3, v4, v5) = (try models.model(version: 3), try models.model(version: 4), try models.model(version: 5))
        let steps = [try migrator.step(from: v3, to: v4, dialect: SQLiteDialect()), try migrator.step(from: v4, to: v5, dialect: SQLiteDialect())]
        let fused = MigrationPlan.resumptionFingerprints(fusedPass: steps)
        #expect(Set(fused + steps.map(\.resumptionFingerprint)).count == 4)
        #expect(MigrationPlan.whyNotResumable(fusedPass: steps, policies: BookStoreMigration.policies) == nil)
        #expect(
            MigrationPlan.whyNotResumable(fusedPass: steps + [steps[1]], policies: BookStoreMigration.policies)?.contains(
                "a pass of two is continued"
            ) == true
        )
    }
}
