import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@testable import Persistence

/// Hooks that declare the values they read and set (``DeclaredValues``): the step makes the
/// destinations as SQL and runs only those values through Swift. The rows are the ones the
/// whole-object hooks make; a hook that touches what it did not declare, or sets a value of
/// the wrong type, stops the migration with the store as it was.
///
/// 2 050 generated books and the catalogue (prices with cents, non-ASCII titles and authors,
/// books without an author or with a one-word author) in batches of 100; a chunk is 50
/// batches, so the publications come in several chunks, the last one short.
@Suite(.serialized) struct DeclaredValuesTests {
    static let books = 2_050
    static let batchSize = 100

    @Test(arguments: TestEngine.allCases)
    func declaredAndWholeObjectHooksGiveTheSameRows(engine: TestEngine) async throws {
        let models = try loadModels()
        try await engine.withSeededStore(books: Self.books) { declaredURL in
            try await engine.withSeededStore(books: Self.books) { wholeURL in
                let expected = try await ExpectedBookStore.migrating(declaredURL, from: 1, to: 5)
                let log = LogRecorder()
                let declared = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: models), batchSize: Self.batchSize, logger: log.logger)
                let plan = try await declared.migrateStore(at: declaredURL)
                let described = plan.steps.flatMap(\.entityMappingPlans).map(\.description)
                #expect(
                    described.contains(
                        "PublicationToPublication: instances as SQL, firstName, lastName set in Swift by PublicationToPublicationMigrationPolicy; relationships as SQL"
                    ),
                    "\(described)"
                )
                #expect(
                    described.contains(
                        "PublicationToPublication: instances as SQL, synopsis set in Swift by SynopsisMigrationManager; relationships as SQL"
                    ),
                    "\(described)"
                )
                // The manager still reports its step's progress as it goes.
                #expect(log.all.contains { $0.contains("Migration progress of BookStore 4 → BookStore 5: 100%") })

                let whole = ProgressiveMigrator(
                    chain: try BookStoreMigration.chain(models: models, hooks: .wholeObjects),
                    batchSize: Self.batchSize,
                    logger: quietLogger
                )
                try await whole.migrateStore(at: wholeURL)
                let declaredRows = try await MigrationFaultTests.tableContents(declaredURL)
                let wholeRows = try await MigrationFaultTests.tableContents(wholeURL)
                #expect(declaredRows.keys.sorted() == wholeRows.keys.sorted())
                for table in wholeRows.keys.sorted() {
                    let (a, b) = (declaredRows[table] ?? [], wholeRows[table] ?? [])
                    #expect(
                        a == b,
                        "\(table): \(Set(a).subtracting(b).sorted().prefix(3)) declared, \(Set(b).subtracting(a).sorted().prefix(3)) whole objects"
                    )
                }
                try await expectStore(declaredURL, atVersion: 5, holds: expected)
                try await expectNoLeftovers(declaredURL)
            }
        }
    }

    /// A policy that reads an attribute it did not declare stops the step, naming it; the
    /// store is as it was.
    @Test(arguments: TestEngine.allCases)
    func aHookReadingAnUndeclaredAttributeStopsTheMigration(engine: TestEngine) async throws {
        try await expectRefusal(of: PriceReadingPolicy.self, engine: engine) { error in
            error.code == .evaluationFailed && error.message.contains("'price' of its source Publication")
                && error.message.contains("PriceReadingPolicy") && error.hint?.contains("declared reads") == true
        }
    }

    /// Setting an attribute it did not declare is refused the same way.
    @Test(arguments: TestEngine.allCases)
    func aHookSettingAnUndeclaredAttributeStopsTheMigration(engine: TestEngine) async throws {
        try await expectRefusal(of: TitleSettingPolicy.self, engine: engine) { error in
            error.code == .evaluationFailed && error.message.contains("'title' of its destination Publication")
                && error.hint?.contains("declared sets") == true
        }
    }

    /// A relationship is never declared: using one is refused.
    @Test(arguments: TestEngine.allCases)
    func aHookUsingARelationshipStopsTheMigration(engine: TestEngine) async throws {
        try await expectRefusal(of: PagesReadingPolicy.self, engine: engine) { error in
            error.code == .evaluationFailed && error.message.contains("'pages' of its source Publication")
        }
    }

    /// A declared value set once the mapping's instances are written (a destination kept
    /// for `endInstanceCreation`) would be lost: it stops the migration.
    @Test(arguments: TestEngine.allCases)
    func aValueSetAfterTheInstancesAreWrittenStopsTheMigration(engine: TestEngine) async throws {
        try await expectRefusal(of: LateSettingPolicy.self, engine: engine) { error in
            error.code == .evaluationFailed && error.message.contains("endInstanceCreation of PublicationToPublication used 'firstName'")
        }
    }

    /// A declared value of the wrong type stops the step before it writes the chunk.
    @Test(arguments: TestEngine.allCases)
    func aValueOfTheWrongTypeStopsTheMigration(engine: TestEngine) async throws {
        try await expectRefusal(of: NumberSettingPolicy.self, engine: engine) { error in
            error.code == .validationFailed && error.message.contains("'firstName'") && error.property == "firstName"
        }
    }

    /// A destination the hook made itself is not one the step can write as SQL.
    @Test(arguments: TestEngine.allCases)
    func aDestinationNotMadeBySuperStopsTheMigration(engine: TestEngine) async throws {
        try await expectRefusal(of: OwnDestinationPolicy.self, engine: engine) { error in
            error.code == .evaluationFailed && error.message.contains("that super.createDestinationInstances did not make")
        }
    }

    /// A policy that makes no destination for some sources leaves them out, as the same
    /// policy given whole objects does; a hook that sets nothing keeps the mapping's values.
    @Test(arguments: TestEngine.allCases)
    func sourcesWithoutADestinationAreLeftOutAsWithWholeObjects(engine: TestEngine) async throws {
        let models = try loadModels()
        try await engine.withSeededStore(books: 250, version: 3) { declaredURL in
            try await engine.withSeededStore(books: 250, version: 3) { wholeURL in
                for (url, policy) in [(declaredURL, SkippingPolicy.self), (wholeURL, WholeSkippingPolicy.self)]
                    as [(StoreURL, EntityMigrationPolicy.Type)]
                {
                    var policies = MigrationPolicies()
                    policies.register(policy, as: "PublicationToPublicationMigrationPolicy")
                    let chain = try MigrationChain(
                        BookStoreVersion.self,
                        models: models.versions,
                        mappingModels: models.mappingModels,
                        policies: policies
                    )
                    try await ProgressiveMigrator(chain: chain, batchSize: 10, logger: quietLogger).migrateStore(at: url, to: "BookStore 4")
                }
                let declaredRows = try await MigrationFaultTests.tableContents(declaredURL)
                let wholeRows = try await MigrationFaultTests.tableContents(wholeURL)
                #expect(declaredRows == wholeRows)
                let seededPublications = try await PersistentStore.inspect(declaredURL) { connection in
                    try connection.scalar("SELECT count(*) FROM \(storeName: "ZPUBLICATION")")?.int64
                }
                let withAuthor = try await PersistentStore.inspect(declaredURL) { connection in
                    try connection.scalar("SELECT count(*) FROM \(storeName: "ZPUBLICATION") WHERE \(storeName: "ZFIRSTNAME") IS NOT NULL")?.int64
                }
                // Only the publications with an author were made, each with its first name.
                #expect(seededPublications != nil && seededPublications == withAuthor)
            }
        }
    }

    /// A value the hook sets counts even where Swift finds it equal to the mapping's: the
    /// author as the mapping copies it, decomposed by the hook ("Zoë" as "Zoe" and a combining
    /// diaeresis), is written decomposed, as the whole-object hook writes it.
    @Test(arguments: TestEngine.allCases)
    func aValueEqualToTheMappingsIsStillWritten(engine: TestEngine) async throws {
        let models = try loadModels()
        var mappings = models.mappingModels
        let index = try #require(
            mappings.firstIndex { $0.entityMappings.contains { $0.policyName?.hasSuffix("PublicationToPublicationMigrationPolicy") == true } }
        )
        try StepFusionTests.setAttribute("firstName", of: "PublicationToPublication", in: &mappings[index], to: "$source.author")
        try await engine.withSeededStore(books: 250, version: 3) { declaredURL in
            try await engine.withSeededStore(books: 250, version: 3) { wholeURL in
                for (url, policy) in [(declaredURL, DecomposingPolicy.self), (wholeURL, WholeDecomposingPolicy.self)]
                    as [(StoreURL, EntityMigrationPolicy.Type)]
                {
                    var policies = MigrationPolicies()
                    policies.register(policy, as: "PublicationToPublicationMigrationPolicy")
                    let chain = try MigrationChain(BookStoreVersion.self, models: models.versions, mappingModels: mappings, policies: policies)
                    try await ProgressiveMigrator(chain: chain, batchSize: 10, logger: quietLogger).migrateStore(at: url, to: "BookStore 4")
                }
                let declaredRows = try await MigrationFaultTests.tableContents(declaredURL)
                #expect(declaredRows == (try await MigrationFaultTests.tableContents(wholeURL)))
                let publications = declaredRows["ZPUBLICATION"] ?? []
                #expect(publications.contains { $0.unicodeScalars.contains("\u{0308}") }, "no decomposed name was written")
            }
        }
    }

    // MARK: Helpers

    /// Migrates a version 3 store with `policy` as BookStore's 3 → 4 policy, expecting a
    /// ``MigrationError`` that `matches`, and the store unchanged.
    private func expectRefusal(
        of policy: EntityMigrationPolicy.Type,
        engine: TestEngine,
        matches: @escaping @Sendable (MigrationError) -> Bool
    ) async throws {
        let models = try loadModels()
        var policies = MigrationPolicies()
        policies.register(policy, as: "PublicationToPublicationMigrationPolicy")
        let chain = try MigrationChain(BookStoreVersion.self, models: models.versions, mappingModels: models.mappingModels, policies: policies)
        try await engine.withSeededStore(books: 250, version: 3) { url in
            let before = try await StoreSnapshot(url)
            let migrator = ProgressiveMigrator(chain: chain, batchSize: 10, logger: quietLogger)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            let cause = error.flatMap { ($0.underlying as? MigrationError) ?? $0 }
            #expect(cause.map(matches) == true, "\(String(describing: error))")
            try await expectUnchanged(url, since: before)
        }
    }
}

/// The author split, declared, which also reads the undeclared price.
private final class PriceReadingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var fetchesFromStores: Bool { false }
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName"]) }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])[0]
        destination.setValue(source.value(forKey: "author"), forKey: "firstName")
        _ = source.value(forKey: "price")
    }
}

/// Sets the undeclared title.
private final class TitleSettingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName"]) }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])[0]
        destination.setValue(.string("Retitled"), forKey: "title")
    }
}

/// Reads the pages of its source.
private final class PagesReadingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName"]) }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        _ = try? await source.destinations(forKey: "pages")
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }
}

/// Sets the first name to a number.
private final class NumberSettingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: [], sets: ["firstName"]) }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])[0]
        destination.setValue(.integer(7), forKey: "firstName")
    }
}

/// Makes its destination itself, as a hook given whole objects may.
private final class OwnDestinationPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName"]) }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        let destination = try manager.destinationContext.insertObject(entityName: "Publication")
        manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    }
}

/// Makes a publication only for a source with an author, its first name the whole author;
/// the last name is left as the mapping makes it.
private class WholeSkippingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var fetchesFromStores: Bool { false }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        guard case .string(let author) = source.value(forKey: "author") else { return }
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])[0]
        destination.setValue(.string(author), forKey: "firstName")
    }
}

/// ``WholeSkippingPolicy``, declared.
private final class SkippingPolicy: WholeSkippingPolicy, @unchecked Sendable {
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName", "lastName"]) }
}

/// Sets the first name to the author decomposed, which Swift finds equal to the author the
/// mapping copied there.
private class WholeDecomposingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var fetchesFromStores: Bool { false }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        guard case .string(let author) = source.value(forKey: "author") else { return }
        let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])[0]
        destination.setValue(.string(author.decomposedStringWithCanonicalMapping), forKey: "firstName")
    }
}

/// ``WholeDecomposingPolicy``, declared.
private final class DecomposingPolicy: WholeDecomposingPolicy, @unchecked Sendable {
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName"]) }
}

/// Keeps the last destination and sets its first name once every instance is made.
private final class LateSettingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    private let kept = Mutex<ManagedObject?>(nil)
    override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    override class var declaredValues: DeclaredValues? { DeclaredValues(reads: ["author"], sets: ["firstName"]) }
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])[0]
        kept.withLock { $0 = destination }
    }
    override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) async throws {
        kept.withLock { $0 }?.setValue(.string("Late"), forKey: "firstName")
    }
}
