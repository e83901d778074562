import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@testable import Persistence

/// BookStore's two streamed steps (3 → 4 splits the author through a policy, 4 → 5 sets
/// the synopsis in a manager's hook) run as one pass: each batch of publications is read
/// once, carried through both steps in memory and written once, at version 5. The result
/// is, row for row, what running the steps one after the other gives, on every engine.
///
/// 2 050 generated books and the catalogue (prices with cents, non-ASCII titles and
/// authors, books without an author) in batches of 100: many batches, the last one short.
@Suite(.serialized) struct FusedMigrationTests {
    static let books = 2_050
    static let batchSize = 100

    @Test(arguments: TestEngine.allCases)
    func fusedAndStepByStepRunsGiveTheSameRows(engine: TestEngine) async throws {
        let models = try loadModels()
        let chain = try BookStoreMigration.chain(models: models, hooks: .wholeObjects)
        try await engine.withSeededStore(books: Self.books) { fusedURL in
            try await engine.withSeededStore(books: Self.books) { stepByStepURL in
                let seeded = try await MigrationFaultTests.tableContents(fusedURL)
                try #require(seeded == (try await MigrationFaultTests.tableContents(stepByStepURL)), "the two stores were seeded differently")

                let expected = try await ExpectedBookStore.migrating(fusedURL, from: 1, to: 5)
                let log = LogRecorder()
                let fused = ProgressiveMigrator(chain: chain, batchSize: Self.batchSize, logger: log.logger)
                let plan = try await fused.migrateStore(at: fusedURL)
                #expect(plan.steps.map { $0.fusionWithNext?.isFused } == [false, false, true, nil], "\(plan)")
                #expect(log.all.contains { $0.contains("fused_steps=3+4") }, "the steps did not run as one pass")
                #expect(!log.all.contains { $0.contains("one after the other") })

                let stepByStep = ProgressiveMigrator(chain: chain, batchSize: Self.batchSize, fusesSteps: false, logger: quietLogger)
                let unfusedPlan = try await stepByStep.migrateStore(at: stepByStepURL)
                #expect(unfusedPlan.steps.allSatisfy { $0.fusionWithNext?.isFused != true })

                let fusedRows = try await MigrationFaultTests.tableContents(fusedURL)
                let stepByStepRows = try await MigrationFaultTests.tableContents(stepByStepURL)
                #expect(fusedRows.keys.sorted() == stepByStepRows.keys.sorted())
                for table in stepByStepRows.keys.sorted() {
                    let (fusedTable, stepByStepTable) = (Set(fusedRows[table] ?? []), Set(stepByStepRows[table] ?? []))
                    #expect(
                        fusedTable == stepByStepTable,
                        "\(table): \(fusedTable.subtracting(stepByStepTable).sorted().prefix(3)) fused, \(stepByStepTable.subtracting(fusedTable).sorted().prefix(3)) step by step"
                    )
                    #expect(fusedRows[table]?.count == stepByStepRows[table]?.count)
                }
                // And both are what the design gives at version 5.
                try await expectStore(fusedURL, atVersion: 5, holds: expected)
            }
        }
    }

    /// A policy that makes a second publication for some books cannot hand one new object
    /// per source to the next step: the fused pass finds out, discards what it wrote, and
    /// the steps run one after the other, to the same rows as with fusing turned off.
    @Test(arguments: TestEngine.allCases)
    func aPassThatCannotBeFusedAfterAllRunsStepByStep(engine: TestEngine) async throws {
        let models = try loadModels()
        var policies = BookStoreMigration.policies
        policies.register(DuplicatingAuthorSplitPolicy.self, as: "PublicationToPublicationMigrationPolicy")
        let chain = try MigrationChain(
            WholeObjectHooks.Version.self,
            models: models.versions,
            mappingModels: models.mappingModels,
            policies: policies
        )
        try await engine.withSeededStore(books: 450) { fusedURL in
            try await engine.withSeededStore(books: 450) { stepByStepURL in
                let log = LogRecorder()
                let fused = ProgressiveMigrator(chain: chain, batchSize: Self.batchSize, logger: log.logger)
                #expect(try await fused.plan(forStoreAt: fusedURL).steps[2].fusionWithNext?.isFused == true)
                try await fused.migrateStore(at: fusedURL)
                #expect(log.all.contains { $0.contains("one after the other") && $0.contains("is not the one new Publication of its source") })
                #expect(!log.all.contains { $0.contains("fused_steps=") })

                try await ProgressiveMigrator(chain: chain, batchSize: Self.batchSize, fusesSteps: false, logger: quietLogger)
                    .migrateStore(at: stepByStepURL)
                let fusedRows = try await MigrationFaultTests.tableContents(fusedURL)
                let stepByStepRows = try await MigrationFaultTests.tableContents(stepByStepURL)
                #expect(fusedRows == stepByStepRows)
                // The duplicates are there: the policy did run.
                let publications = try #require(fusedRows.first { $0.key.hasSuffix("PUBLICATION") }?.value)
                #expect(publications.count > 450)
            }
        }
    }

    /// A policy that does not say it leaves the stores alone may fetch what the fused pass
    /// never stores: the plan keeps its step apart and says why.
    @Test func aPolicyThatMayFetchKeepsItsStepApart() throws {
        let models = try loadModels()
        var policies = BookStoreMigration.policies
        policies.register(UndeclaredAuthorSplitPolicy.self, as: "PublicationToPublicationMigrationPolicy")
        let chain = try MigrationChain(
            WholeObjectHooks.Version.self,
            models: models.versions,
            mappingModels: models.mappingModels,
            policies: policies
        )
        let migrator = ProgressiveMigrator(chain: chain, logger: quietLogger)
        for engine in TestEngine.allCases {
            let store: StoreURL = engine == .sqlite ? .sqlite("/nonexistent/bookstore.sqlite") : try StoreURL("postgres://localhost/bookstore")
            let plan = try migrator.plan(from: models.versions.version(named: "BookStore 3")!, store: store)
            let reason = plan.steps[0].fusionWithNext?.description ?? ""
            #expect(reason.contains("not fused") && reason.contains("may fetch from the stores") && reason.contains("fetchesFromStores"), "\(reason)")
        }
    }
}

/// BookStore's author split, declared not to read the stores, which also makes a second
/// publication for every seventh book.
final class DuplicatingAuthorSplitPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var fetchesFromStores: Bool { false }

    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await PublicationToPublicationMigrationPolicy().createDestinationInstances(forSource: source, in: mapping, manager: manager)
        guard let key = source.objectID.primaryKey, key % 7 == 0 else { return }
        let copy = try manager.destinationContext.insertObject(entityName: "Publication")
        copy.setValue(source.value(forKey: "title"), forKey: "title")
        copy.setValue(source.value(forKey: "price"), forKey: "price")
        copy.setValue(.string("Copy"), forKey: "firstName")
        manager.associate(sourceInstance: source, withDestinationInstance: copy, for: mapping)
    }
}

/// BookStore's author split without saying whether it reads the stores.
final class UndeclaredAuthorSplitPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }

    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await PublicationToPublicationMigrationPolicy().createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }
}
