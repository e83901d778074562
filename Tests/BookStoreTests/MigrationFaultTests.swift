import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// A migration that fails, is aborted as a killed process would be, or is cancelled at any
/// point of BookStore's chain (v1 → v5: two steps in place, two streamed) leaves the store
/// whole — as it was on SQLite, at its last completed step on PostgreSQL, row for row what
/// the design gives at that version (``ExpectedBookStore``, computed from the rows the store
/// had, not by the migrator) — and the next run completes, again row for row.
///
/// 2 500 generated books and the catalogue in batches of 20: the publications, made as SQL
/// with the hooks' declared values, come in chunks of ten batches (200 rows), and points
/// inside the streamed steps fall after whole chunks.
///
/// One case at a time: each holds several sessions of the test server (the migration's
/// lock, its source and destination stores, a reference store), and side by side the 46
/// cases would take more than the server's connections.
@Suite(.serialized) struct MigrationFaultTests {
    static let books = 2_500

    /// Points of every kind, in every step.
    static let checkpoints: [MigrationCheckpoint] = [
        .stepFinished(step: 1),
        .stepFinished(step: 2),
        .rowsCreated(step: 3, entityMapping: "PublicationToPublication", rows: 2_000),
        .stageFinished(step: 3, stage: .createInstances, entityMapping: "PageToPage"),
        .stepFinished(step: 3),
        .rowsCreated(step: 4, entityMapping: "PublicationToPublication", rows: 1_000),
        .stageFinished(step: 4, stage: .createRelationships, entityMapping: "PageToPage"),
        .swapping(step: 4),
    ]

    struct Fault: Sendable, CustomTestStringConvertible {
        let checkpoint: MigrationCheckpoint
        /// Stop as a killed process would rather than fail.
        let aborts: Bool
        var testDescription: String { "\(aborts ? "abort" : "fail") at \(checkpoint)" }
    }

    static let faults = checkpoints.flatMap { [Fault(checkpoint: $0, aborts: false), Fault(checkpoint: $0, aborts: true)] }

    struct InjectedFailure: Error {}

    @Test(arguments: TestEngine.allCases, faults)
    func aFailureLeavesTheStoreWholeAndTheNextRunCompletes(engine: TestEngine, fault: Fault) async throws {
        try await engine.withSeededStore(books: Self.books) { url in
            let before = try await Self.tableContents(url, includingMetadata: true)
            let expected = try await Self.expectations(url)
            let reached = Mutex(false)
            let migrator = try Self.migrator { checkpoint in
                guard checkpoint == fault.checkpoint else { return }
                reached.withLock { $0 = true }
                if fault.aborts { throw MigrationAbort() }
                throw InjectedFailure()
            }
            let error = await Self.error(of: migrator, at: url)
            #expect(reached.withLock { $0 }, "the migration never reached \(fault.checkpoint)")
            if fault.aborts {
                #expect(error is MigrationAbort, "\(String(describing: error))")
                // As a killed process: the SQLite lock file stays beside the store for the next run.
                if engine == .sqlite { #expect(try await StoreSnapshot(url).leftovers.contains { $0.hasSuffix("-migration.lock") }) }
            } else {
                #expect(error != nil && !(error is MigrationAbort), "\(String(describing: error))")
                try await expectNoLeftovers(url)
            }
            try await Self.expectWholeAndCompleting(url, engine: engine, before: before, expected: expected)
        }
    }

    /// Cancelling the migrating task at a point: the store whole, nothing left beside it
    /// (clean-up reaches the database although the task is cancelled), the next run completes.
    @Test(arguments: TestEngine.allCases, checkpoints.filter { if case .swapping = $0 { false } else { true } })
    func aCancellationLeavesTheStoreWholeWithNothingBesideIt(engine: TestEngine, checkpoint: MigrationCheckpoint) async throws {
        try await engine.withSeededStore(books: Self.books) { url in
            let before = try await Self.tableContents(url, includingMetadata: true)
            let expected = try await Self.expectations(url)
            let migrator = try Self.migrator { reached in
                if reached == checkpoint { withUnsafeCurrentTask { task in task?.cancel() } }
            }
            let error = await Self.migrationError(of: migrator, at: url)
            #expect(error?.code == .cancelled, "expected a cancellation, got \(String(describing: error))")
            try await expectNoLeftovers(url)
            try await Self.expectWholeAndCompleting(url, engine: engine, before: before, expected: expected)
        }
    }

    /// What the store at version 1 at `url` holds at each version (1 to 5) by the design.
    /// At version 3 its rows keep the numbers they have at version 1: the in-place steps
    /// leave the renumbering to the streamed step 3 → 4, and a store stopped between them
    /// is numbered as it was.
    static func expectations(_ url: StoreURL) async throws -> [Int: ExpectedBookStore] {
        let numbers = try await ExpectedBookStore.entityNumbers(url, version: 1)
        var expected: [Int: ExpectedBookStore] = [:]
        for version in 1...5 {
            expected[version] = try await ExpectedBookStore.migrating(url, from: 1, to: version, entities: version == 3 ? numbers : nil)
        }
        return expected
    }

    static func migrator(faultInjection: @escaping MigrationFaultInjection) throws -> ProgressiveMigrator {
        ProgressiveMigrator(
            chain: try BookStoreMigration.chain(models: try loadModels()),
            batchSize: 20,
            logger: quietLogger,
            faultInjection: faultInjection
        )
    }

    /// What the migration threw; `nil` when it completed.
    static func error(of migrator: ProgressiveMigrator, at url: StoreURL) async -> (any Error)? {
        do {
            try await migrator.migrateStore(at: url)
            return nil
        } catch {
            return error
        }
    }

    /// Runs the migration in a task of its own, which the fault injection may cancel.
    static func migrationError(of migrator: ProgressiveMigrator, at url: StoreURL) async -> MigrationError? {
        await withTaskGroup(of: MigrationError?.self) { group in
            group.addTask {
                do {
                    try await migrator.migrateStore(at: url)
                    return nil
                } catch {
                    return error as? MigrationError
                }
            }
            return await group.next() ?? nil
        }
    }

    /// The store at `url` is at a version of the chain holding, row for row, what the design
    /// gives at that version (on SQLite: the very store it was); then a plain run migrates it
    /// to what the design gives at the current version, nothing beside it.
    static func expectWholeAndCompleting(
        _ url: StoreURL,
        engine: TestEngine,
        before: [String: [String]],
        expected: [Int: ExpectedBookStore]
    ) async throws {
        let models = try loadModels()
        let metadata = try await PersistentStore.metadata(at: url)
        let version = try #require(models.versions.version(matching: metadata), "the store is at no version of the chain")
        let number = try #require(models.versions.versions.firstIndex { $0.name == version.name }) + 1
        if engine == .sqlite || number == 1 {
            // Row for row as it was, its metadata too. (Not byte for byte: a migration first
            // writes the store's WAL back into its file, which moves committed pages only.)
            #expect(try await tableContents(url, includingMetadata: true) == before, "the store changed")
        }
        try await expectStore(url, atVersion: number, holds: try #require(expected[number]))
        try await BookStoreMigration.migrator(models: models, logger: quietLogger).migrateStore(at: url)
        try await expectNoLeftovers(url)
        try await expectStore(url, atVersion: 5, holds: try #require(expected[5]))
        #expect(try await PersistentStore.metadata(at: url).modelVersionName == models.current.name)
    }

    /// Every table's rows, sorted; Z_METADATA left out unless asked for (it carries the
    /// store's own UUID, which another store of the same rows does not share).
    static func tableContents(_ url: StoreURL, includingMetadata: Bool = false) async throws -> [String: [String]] {
        try await PersistentStore.inspect(url) { connection in
            let names =
                connection.dialect is PostgresDialect
                ? try connection.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()").compactMap {
                    $0[0].text
                }
                : try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0].text }
            var contents: [String: [String]] = [:]
            for name in names where includingMetadata || name.uppercased() != "Z_METADATA" {
                contents[name.uppercased()] = try connection.rows(rawSQL: "SELECT * FROM \(name)").map { row in
                    row.values.map { "\($0)" }.joined(separator: " | ")
                }.sorted()
            }
            return contents
        }
    }
}

extension TestEngine {
    /// Runs `body` with a new store of this engine seeded at `version` (1 by default) with
    /// the catalogue and `books` generated books, removed afterwards.
    func withSeededStore<T>(books: Int, version: Int = 1, _ body: (StoreURL) async throws -> T) async throws -> T {
        switch self {
        case .sqlite:
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            let url = sqliteStoreURL(in: directory)
            try await Self.seed(url, books: books, version: version)
            return try await body(url)
        case .postgres:
            return try await TestPostgres.withDatabase { url in
                try await Self.seed(url, books: books, version: version)
                return try await body(url)
            }
        }
    }

    private static func seed(_ url: StoreURL, books: Int, version: Int) async throws {
        _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger)
            .seed(url, version: version, count: books, catalogue: try loadCatalogue())
    }
}
