import BookStore
import Foundation
import Logging
import Persistence
import Synchronization

/// One backend's migration benchmark: see ``MigrateBenchmarkCommand``.
struct MigrationBenchmark {
    let backend: any BenchmarkBackend
    let models: BookStoreModels
    let books: Int
    /// Whether the framework fuses consecutive streamed steps into one pass (its default).
    var fusesSteps = true
    /// How the chain's hooks are given their instances: as BookStore ships (declared values)
    /// or whole objects, as before they declared them.
    var hooks = BookStoreMigration.Hooks.declaredValues
    let logger: Logger

    /// The steps of the chain, by the version they start from.
    static let firstVersion = 2
    static let lastVersion = 5

    func run() async throws -> MigrationBenchmarkResult {
        let rows = 3 * books
        progress("writing a BookStore \(Self.firstVersion) store of \(books) books and \(2 * books) pages")
        let source = try await backend.newStore("source")
        try await SourceStoreWriter(model: try models.model(version: Self.firstVersion), books: books, logger: logger).write(to: source)
        let frameworkStore = try await backend.copy(source, label: "framework")
        let inPlaceStore = try await backend.copy(source, label: "in-place")
        let rebuildStore = try await backend.copy(source, label: "rebuild")

        progress("migrating with the framework")
        let framework = try await runFramework(on: frameworkStore)
        progress("migrating with hand-written SQL in place")
        let inPlace = try await runHandWritten(.inPlace, on: inPlaceStore)
        progress("migrating with hand-written SQL as a rebuild")
        let rebuild = try await runHandWritten(.rebuild, on: rebuildStore)
        // Copied after the framework's run, so that the framework runs on a machine as busy
        // as before this floor was added.
        let onePassStore = try await backend.copy(source, label: "one-pass")
        progress("migrating with hand-written SQL as one rebuild for the whole chain")
        let onePass = try await runWholeChainByHand(on: onePassStore)
        progress("comparing the framework's store with the rebuilt ones")
        let comparison = StoreComparison(backend: backend, model: models.current)
        let difference = try await comparison.difference(frameworkStore, rebuildStore)
        let onePassDifference = try await comparison.difference(frameworkStore, onePassStore)
        progress("timing the opening of the current store")
        let opening = try await OpeningBenchmark(backend: backend, models: models, logger: logger).run(on: frameworkStore)

        // A fused pass is one row, against the floors of the steps it runs.
        let steps = framework.passes.map { pass in
            MigrationBenchmarkResult.Step(
                name: "BookStore \(Self.firstVersion + pass.steps.lowerBound) → BookStore \(Self.firstVersion + pass.steps.upperBound)",
                strategy: pass.strategy,
                rows: rows,
                seconds: pass.seconds,
                inPlaceSQLSeconds: inPlace[pass.steps].reduce(0, +),
                rebuildSQLSeconds: rebuild[pass.steps].reduce(0, +)
            )
        }
        return MigrationBenchmarkResult(
            backend: backend.name,
            books: books,
            pages: 2 * books,
            steps: steps,
            chain: .init(
                name: "BookStore \(Self.firstVersion) → BookStore \(Self.lastVersion)",
                strategy: "chain",
                rows: rows,
                seconds: framework.total,
                inPlaceSQLSeconds: inPlace.reduce(0, +),
                rebuildSQLSeconds: rebuild.reduce(0, +),
                onePassSQLSeconds: onePass
            ),
            peakResidentBytes: framework.peakResidentBytes,
            residentBytesBefore: framework.residentBytesBefore,
            sameRowsAsRebuild: difference == nil,
            sameRowsAsOnePass: onePassDifference == nil,
            difference: difference ?? onePassDifference,
            opening: opening,
            stages: framework.stages
        )
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("[\(backend.name)] \(message)…\n".utf8))
    }

    /// What the framework's run measured: per-pass and total seconds, peak memory.
    struct FrameworkRun {
        /// A step, or consecutive steps fused into one pass: the steps' indexes, how it ran,
        /// its seconds.
        struct Pass {
            var steps: Range<Int>
            var strategy: String
            var seconds: Double
        }

        var passes: [Pass]
        /// Each mapping's instance stage with where its time went, as the framework logged it.
        var stages: [StagePartsRecorder.Stage]
        var total: Double
        var peakResidentBytes: Int
        var residentBytesBefore: Int
    }

    /// Migrates with `ProgressiveMigrator`, as `bookstore migrate` does. A step ends at its
    /// last progress report (finished, or its in-place stage); a fused pass at its last step's.
    private func runFramework(on url: StoreURL) async throws -> FrameworkRun {
        let parts = StagePartsRecorder()
        let migrator = ProgressiveMigrator(
            chain: try BookStoreMigration.chain(models: models, hooks: hooks),
            fusesSteps: fusesSteps,
            logger: parts.logger(forwardingTo: logger)
        )
        let plan = try await migrator.plan(forStoreAt: url)
        let before = PeakMemory.current
        PeakMemory.reset()
        let started = ContinuousClock.now
        let ends = Mutex<[Int: ContinuousClock.Instant]>([:])
        try await migrator.migrateStore(at: url) { update in
            guard update.stage == .finished || update.stage == .inPlace else { return }
            let now = ContinuousClock.now
            ends.withLock { ends in if ends[update.step] == nil { ends[update.step] = now } }
        }
        let total = ContinuousClock.now - started
        let stepEnds = ends.withLock { $0 }
        let peak = PeakMemory.peak
        var previous = started
        var passes: [FrameworkRun.Pass] = []
        var first = 0
        for index in plan.steps.indices where plan.steps[index].fusionWithNext?.isFused != true {
            let end = stepEnds[index + 1] ?? previous
            let strategy = index > first ? "fused" : plan.steps[index].strategy.rawValue
            passes.append(.init(steps: first..<(index + 1), strategy: strategy, seconds: (end - previous).seconds))
            previous = end
            first = index + 1
        }
        return FrameworkRun(passes: passes, stages: parts.recorded, total: total.seconds, peakResidentBytes: peak, residentBytesBefore: before)
    }

    /// Runs the whole chain by hand in one pass on `url`; returns its seconds.
    private func runWholeChainByHand(on url: StoreURL) async throws -> Double {
        let migration = HandWrittenMigration(dialect: backend.dialect, style: .rebuild)
        return try await timed([migration.wholeChainStatements()], on: url, migration: migration).reduce(0, +)
    }

    /// Runs the hand-written steps one after the other on `url`; returns each one's seconds.
    private func runHandWritten(_ style: HandWrittenMigration.Style, on url: StoreURL) async throws -> [Double] {
        let migration = HandWrittenMigration(dialect: backend.dialect, style: style)
        return try await timed((Self.firstVersion..<Self.lastVersion).map(migration.statements(from:)), on: url, migration: migration)
    }

    /// Runs each group of statements in a transaction of its own on `url`; returns each one's seconds.
    private func timed(_ groups: [[String]], on url: StoreURL, migration: HandWrittenMigration) async throws -> [Double] {
        let database = try await backend.openDatabase(url)
        var seconds: [Double] = []
        do {
            for statements in groups {
                let started = ContinuousClock.now
                try await migration.run(statements, on: database)
                seconds.append((ContinuousClock.now - started).seconds)
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
        return seconds
    }
}

extension Duration {
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
