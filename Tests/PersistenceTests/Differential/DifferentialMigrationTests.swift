import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Differential tests on realistic data: stores drawn from a seed (``DifferentialSeed``),
/// migrated by every kind of step on SQLite, PostgreSQL and in memory, each result held to
/// the others and to what the test computes from the rows it wrote.
///
/// The cases cross the four kinds of step with 0, 1, 999, 1 000, 1 001 and 5 000 items
/// (around the batch size of 1 000); each kind meets entities of 1, 8, 64 and 200
/// attributes, every shape of relationship (``DifferentialModel``) with each of its
/// relationships ordered and not (``DifferentialShapes``), and PostgreSQL writes each
/// case's stores by the bulk path the case forces (`bulk_insert=automatic|copy|parameters`),
/// the migration's writes included.
///
/// One case at a time: each generates and migrates thousands of rows on the test process's
/// cooperative threads; two at once took both of a two-core machine's threads from the tests
/// beside them (in-process services among them) for minutes.
@Suite("Differential migrations", .serialized)
struct DifferentialMigrationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let number: Int
        let kind: DifferentialStepKind
        let width: Int
        let rows: Int
        let bulkInsert: PostgresConfiguration.BulkInsertMethod
        let shapes: DifferentialShapes

        var testDescription: String {
            "\(kind.rawValue), \(width) attributes, \(rows) items, \(shapes.testDescription), PostgreSQL by \(bulkInsert.rawValue)"
        }

        static let rowCounts = [0, 1, 999, 1_000, 1_001, 5_000]
        static let widths = [1, 8, 64, 200]

        /// Every kind with every row count; the widths, bulk paths and orders turn so that each
        /// kind meets each of them (5 000 items take at most 8 attributes, to keep the run short; 64 and 200 meet 999 to 1 001 items).
        static let all: [Case] = DifferentialStepKind.allCases.enumerated().flatMap { kindIndex, kind in
            rowCounts.enumerated().map { rowIndex, rows in
                var width = widths[(kindIndex + rowIndex) % widths.count]
                if rows == 5_000 { width = min(width, 8) }
                return Case(
                    number: kindIndex * rowCounts.count + rowIndex,
                    kind: kind,
                    width: width,
                    rows: rows,
                    bulkInsert: PostgresConfiguration.BulkInsertMethod.allCases[rowIndex % 3],
                    shapes: .forCase(kind: kind, kindIndex: kindIndex, rowIndex: rowIndex, rows: rows)
                )
            }
        }
    }

    @Test(arguments: Case.all)
    func everyEngineMigratesToWhatTheRowsSay(_ testCase: Case) async throws {
        var rng = DifferentialSeed.generator(forCase: testCase.number)
        let store = DifferentialStore(width: testCase.width, rows: testCase.rows, shapes: testCase.shapes, using: &rng)
        let expected = store.expected(after: testCase.kind)
        var results: [(backend: TestBackend, contents: DifferentialContents)] = []
        for backend in TestBackend.allCases {
            let contents = try await migrated(store, on: backend, testCase)
            let differences = contents.differences(from: expected.kept(by: backend), attributeNames: store.attributeNames)
            #expect(
                differences.isEmpty,
                "\(backend.rawValue) differs from the rows written: \(differences.joined(separator: "; ")) — \(DifferentialSeed.replay)"
            )
            results.append((backend, contents))
        }
        let (first, reference) = results[0]
        for (backend, contents) in results.dropFirst() {
            let differences = contents.differences(from: reference.kept(by: backend), attributeNames: store.attributeNames)
            #expect(
                differences.isEmpty,
                "\(backend.rawValue) differs from \(first.rawValue): \(differences.joined(separator: "; ")) — \(DifferentialSeed.replay)"
            )
        }
    }

    /// Writes `store` at version 1 on `backend`, migrates it the case's way and reads it back.
    func migrated(_ store: DifferentialStore, on backend: TestBackend, _ testCase: Case) async throws -> DifferentialContents {
        try await backend.withStoreURL(fileName: "store.sqlite") { url in
            switch url.kind {
            case .memory:
                return try await migratedInMemory(store, at: url, kind: testCase.kind)
            case .postgres(var configuration):
                configuration.bulkInsert = testCase.bulkInsert
                return try await migratedBySQLEngine(store, at: .postgres(configuration), kind: testCase.kind)
            case .sqlite:
                return try await migratedBySQLEngine(store, at: url, kind: testCase.kind)
            }
        }
    }

    /// A SQLite or PostgreSQL store, migrated by a ``ProgressiveMigrator``, which must run
    /// the step the way the kind says.
    func migratedBySQLEngine(_ store: DifferentialStore, at url: StoreURL, kind: DifferentialStepKind) async throws -> DifferentialContents {
        try await makeClosedStore(at: url, model: try store.model(version: 1)) { container in
            try await store.fill(container.newContext())
        }
        let plan = try await ProgressiveMigrator(chain: try kind.chain(store), logger: testLogger).migrateStore(at: url)
        #expect(plan.steps.map(\.strategy) == [kind.strategy], "\(url.testEngine.rawValue) ran \(plan.steps)")
        try await expectNoLeftovers(url)
        return try await withOpenStore(url, model: try store.model(version: 2)) { container in
            try await DifferentialContents(reading: container.newContext(), attributeNames: store.attributeNames, shapes: store.shapes)
        }
    }

    /// An in-memory store, migrated by a ``MigrationManager`` into another: the source and
    /// the destination stay open meanwhile, as an in-memory store lasts as long as a
    /// connection to it.
    func migratedInMemory(_ store: DifferentialStore, at url: StoreURL, kind: DifferentialStepKind) async throws -> DifferentialContents {
        let destinationURL = StoreURL(kind: .memory(name: "differential-\(UUID().uuidString)"))
        let source = try await PersistentContainer.open(model: try store.model(version: 1), store: url, options: .createIfMissing, logger: testLogger)
        let destination: PersistentContainer
        do {
            try await store.fill(source.newContext())
            destination = try await PersistentContainer.open(
                model: try store.model(version: 2),
                store: destinationURL,
                options: .createIfMissing,
                logger: testLogger
            )
        } catch {
            await source.store.close()
            throw error
        }
        do {
            let manager = kind.managerType.init(
                configuration: MigrationManager.Configuration(
                    sourceModel: try store.model(version: 1),
                    destinationModel: try store.model(version: 2),
                    mappingModel: try kind.managerMapping(store),
                    policies: kind.policies,
                    logger: testLogger
                )
            )
            try await manager.migrateStore(from: url, to: destinationURL)
            let contents = try await DifferentialContents(
                reading: destination.newContext(),
                attributeNames: store.attributeNames,
                shapes: store.shapes
            )
            await destination.store.close()
            await source.store.close()
            return contents
        } catch {
            await destination.store.close()
            await source.store.close()
            throw error
        }
    }
}
