import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@testable import Persistence

extension TestEngine {
    /// Runs `body` with a store holding the frozen store of `version`, on this engine.
    func withFixture<T>(version: Int, _ body: (StoreURL, URL) async throws -> T) async throws -> T {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let sqlite = try copyFixture(version: version, into: directory)
        switch self {
        case .sqlite:
            return try await body(sqlite, directory)
        case .postgres:
            return try await TestPostgres.withDatabase { url in
                _ = try await StoreCopy.copy(from: sqlite, to: url, versions: try loadModels().versions, logger: quietLogger)
                return try await body(url, directory)
            }
        }
    }
}

/// Every path through BookStore's chain, from the frozen stores of versions 1–4 to each
/// later version: counts, and one object's values per entity, as the Core Data articles test.
@Suite struct MigrationPathTests {
    static let paths: [(from: Int, to: Int)] = (1...4).flatMap { from in (from + 1...5).map { (from, $0) } }

    @Test(arguments: TestEngine.allCases, paths)
    func migratesFixture(engine: TestEngine, path: (from: Int, to: Int)) async throws {
        try await engine.withFixture(version: path.from) { url, directory in
            try await migratesFixture(url: url, directory: directory, engine: engine, from: path.from, to: path.to)
        }
    }

    func migratesFixture(url: StoreURL, directory: URL, engine: TestEngine, from: Int, to: Int) async throws {
        let fixture = fixtureURL(version: from)
        let before = try Data(contentsOf: fixture)
        let models = try loadModels()
        let target = try models.model(version: to)

        let plan = try await StoreAdministration(models: models, logger: quietLogger).migrate(url, to: target.name)
        #expect(plan.steps.count == to - from)
        #expect(plan.steps.map(\.destination.name) == (from + 1...to).map { try! models.model(version: $0).name })
        if engine == .sqlite {
            #expect(try leftovers(in: directory).isEmpty, "no work folder or WAL is left beside the store")
        }

        let metadata = try await PersistentStore.metadata(at: url)
        #expect(target.isCompatible(with: metadata))
        // Laid out as the target creates it, as a user's tests check it with the kit.
        try await MigrationTestKit(chain: try BookStoreMigration.chain(models: models), engine: engine, logger: quietLogger)
            .expectLayoutMatches(url, version: target.name)
        let container = try await PersistentContainer.open(model: target, store: url, logger: quietLogger)
        let context = container.newContext()
        let bookEntity = to >= 3 ? "Publication" : "Book"
        let pageToBook = to >= 3 ? "publication" : "book"
        #expect(try await context.count(for: FetchRequest(entityName: bookEntity)) == 4)
        #expect(try await context.count(for: FetchRequest(entityName: "Page")) == 12)

        let first = try #require(
            try await context.fetch(FetchRequest(entityName: bookEntity, predicate: try Predicate(format: "title == %@", "The first book"))).first
        )
        // Version 3 and later stores carry the authors and prices the book assigns.
        #expect(first.value(forKey: "price") == (from >= 3 ? 22.0 : 10.0))
        if to == 2 || to == 3 {
            #expect(first.value(forKey: "author") == (from >= 3 ? "Bill Smith" : .null))
        }
        if to >= 4 {
            #expect(first.value(forKey: "firstName") == (from >= 3 ? "Bill" : .null))
            #expect(first.value(forKey: "lastName") == (from >= 3 ? "Smith" : .null))
        }
        if to == 5 {
            #expect(first.value(forKey: "synopsis") == "The first book")
        }
        let pages = try await first.destinations(forKey: "pages").sorted {
            ($0.value(forKey: "number").integerValue ?? 0) < ($1.value(forKey: "number").integerValue ?? 0)
        }
        #expect(pages.count == 3)
        let page = try #require(pages.first)
        #expect(page.value(forKey: "number") == 1)
        #expect(page.value(forKey: "text") == "It was a bright cold day in April.")
        #expect(try await page.destination(forKey: pageToBook) == first)

        #expect(try Data(contentsOf: fixture) == before, "the frozen fixture must never be written")
    }

    /// Every path again on stores of 2 500 generated books and the catalogue (three batches
    /// of the default 1 000, some of them the last, partial one), every row of every table
    /// held to what ``ExpectedBookStore`` computes from the rows the store had.
    static let generatedBooks = 2_500

    @Test(arguments: TestEngine.allCases, paths)
    func everyRowOfABatchSizedStoreComesThrough(engine: TestEngine, path: (from: Int, to: Int)) async throws {
        try await engine.withStoreURL { url in
            let administration = StoreAdministration(models: try loadModels(), logger: quietLogger)
            let seeded = try await administration.seed(url, version: path.from, count: Self.generatedBooks, catalogue: try loadCatalogue())
            #expect(seeded.books == Self.generatedBooks + 4)
            let expected = try await ExpectedBookStore.migrating(url, from: path.from, to: path.to)
            #expect(expected.tables["ZPAGE"]?.count ?? 0 > 2_000, "\(expected)")
            _ = try await administration.migrate(url, to: try loadModels().model(version: path.to).name)
            try await expectStore(url, atVersion: path.to, holds: expected)
            try await MigrationTestKit(chain: try BookStoreMigration.chain(models: try loadModels()), engine: engine, logger: quietLogger)
                .expectLayoutMatches(url, version: try loadModels().model(version: path.to).name)
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == (try loadModels().model(version: path.to).name))
            try await expectNoLeftovers(url)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func version3StoreGivesTheBooksNamesAtVersion5(engine: TestEngine) async throws {
        let rows = try await engine.withFixture(version: 3) { url, _ in
            _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger).migrate(url)
            let store = try await PersistentStore.open(url, model: try loadModels().current, options: .readOnly, logger: quietLogger)
            let rows = try await store.database.read { try $0.rows("select ztitle, zfirstname, zlastname, zprice from zpublication order by zprice") }
            await store.close()
            return rows
        }
        #expect(
            rows.map { [$0[0].text, $0[1].text, $0[2].text] } == [
                ["The second book", "John", "Doe"], ["The third book", "Jane", "Doe"],
                ["The first book", "Bill", "Smith"], ["The fourth book", "Jack", "Brown"],
            ]
        )
        #expect(rows.map { $0[3] } == [.double(20), .double(21), .double(22), .double(23)])
    }

    @Test(arguments: TestEngine.allCases)
    func planListsEveryStepAndChangesNothing(engine: TestEngine) async throws {
        try await engine.withFixture(version: 1) { url, _ in
            let before = try await StoreSnapshot(url)
            let plan = try await StoreAdministration(models: try loadModels(), logger: quietLogger).migrationPlan(for: url)
            #expect(
                plan.steps.map { "\($0.source.name) → \($0.destination.name)" } == [
                    "BookStore → BookStore 2", "BookStore 2 → BookStore 3", "BookStore 3 → BookStore 4", "BookStore 4 → BookStore 5",
                ]
            )
            #expect(plan.steps[2].mappingModels.map(\.name) == ["Model3To4"])
            #expect(plan.steps[2].strategy == .streamed)
            #expect(plan.steps[3].strategy == .streamed)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aCurrentStoreIsLeftAlone(engine: TestEngine) async throws {
        try await engine.withFixture(version: 4) { url, _ in
            let administration = StoreAdministration(models: try loadModels(), logger: quietLogger)
            _ = try await administration.migrate(url)
            let before = try await StoreSnapshot(url)
            let plan = try await administration.migrate(url)
            #expect(plan.isEmpty)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func progressRunsFromStartToOne(engine: TestEngine) async throws {
        try await engine.withFixture(version: 3) { url, _ in
            let reports = ProgressLog()
            _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger).migrate(url) { reports.append($0) }
            let all = reports.all
            #expect(!all.isEmpty)
            #expect(all.last?.fractionCompleted == 1)
            #expect(all.last?.step == 2 && all.last?.stepCount == 2)
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted })
            #expect(Set(all.map(\.stage)).isSuperset(of: [.createInstances, .createRelationships, .validateAndSave]))
            #expect(all.contains { $0.entityMapping == "PublicationToPublication" && $0.instancesTotal == 4 })
        }
    }

    /// Within a step, each stage's rows weigh what they cost: BookStore 4 → 5 (pages as SQL,
    /// publications as SQL with the synopsis through the manager's hook, foreign keys written
    /// with the instances) in batches of 10, so in chunks of 500 rows. The step's fraction
    /// moves chunk by chunk, never by a fifth at once (a third per stage made the relationship
    /// stage, which writes nothing here, a jump of a third).
    @Test(arguments: TestEngine.allCases)
    func aStepsProgressMovesWithItsWork(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: 2_050, version: 4) { url in
            let reports = ProgressLog()
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), batchSize: 10, logger: quietLogger)
            try await migrator.migrateStore(at: url) { reports.append($0) }
            let fractions = reports.all.map(\.stepFractionCompleted)
            #expect(fractions.last == 1)
            let jumps = zip(fractions, fractions.dropFirst()).map { $1 - $0 }
            #expect(jumps.allSatisfy { $0 >= 0 && $0 <= 0.2 }, "\(jumps.filter { $0 > 0.2 })")
            let relationships = reports.all.filter { $0.stage == .createRelationships }.map(\.stepFractionCompleted)
            #expect((relationships.max() ?? 0) - (relationships.min() ?? 0) < 0.01)
        }
    }

    /// The issue's chain, version 1 to 5: two in-place steps (one pass over the rows each)
    /// and two streamed ones (three passes each) over the same rows. The in-place steps are
    /// a quarter of the work, not half; validation names the entities it validates, with
    /// their rows; the time spent and the time left come with every report.
    @Test(arguments: TestEngine.allCases)
    func progressIsWeighedByTheRowsAndPassesOfEachStep(engine: TestEngine) async throws {
        try await engine.withFixture(version: 1) { url, _ in
            let reports = ProgressLog()
            let plan = try await StoreAdministration(models: try loadModels(), logger: quietLogger).migrate(url) { reports.append($0) }
            try Self.expectWeighedProgress(reports.all, plan: plan)
        }
    }

    /// 2 → 3 renames Book to Publication, which renumbers every row's entity (Core Data
    /// numbers entities by name): PostgreSQL, whose UPDATE writes a new version of every row
    /// and index entry, rebuilds the tables instead; SQLite updates in place. 1 → 2 only adds
    /// a column and stays in place on both.
    @Test func postgreSQLRebuildsAStepThatRewritesEveryRow() throws {
        let models = try loadModels()
        let migrator = try BookStoreMigration.migrator(models: models, logger: quietLogger)
        let (v1, v2, v3) = (try models.model(version: 1), try models.model(version: 2), try models.model(version: 3))
        #expect(try migrator.step(from: v2, to: v3, dialect: PostgresDialect()).strategy == .setBased)
        #expect(try migrator.step(from: v2, to: v3, dialect: SQLiteDialect()).strategy == .inPlace)
        #expect(try migrator.step(from: v1, to: v2, dialect: PostgresDialect()).strategy == .inPlace)
        #expect(try migrator.step(from: v1, to: v2, dialect: SQLiteDialect()).strategy == .inPlace)
    }

    private static func expectWeighedProgress(_ all: [MigrationProgress], plan: MigrationPlan) throws {
        // 2 → 3 runs in place on both engines: it keeps the entities' numbers, which the
        // streamed step 3 → 4 writes anew (alone, PostgreSQL would rebuild it rather than
        // rewrite every row for a new number).
        #expect(plan.steps.map(\.strategy) == [.inPlace, .inPlace, .streamed, .streamed])
        // The passes over the rows the design gives each kind of step, stated here rather than
        // read from the framework: in place one (the ALTERs and UPDATEs), set-based two (the
        // new tables filled, then their relationships), streamed three (objects created, their
        // relationships, validated and saved). Every step here moves the same rows.
        let weights: [Double] = plan.steps.map { step in
            switch step.strategy {
            case .inPlace: 1
            case .setBased: 2
            case .streamed: 3
            }
        }
        #expect(weights == [1, 1, 3, 3])
        for step in 1...4 {
            let end = try #require(all.last { $0.step == step })
            let expected = weights.prefix(step).reduce(0, +) / weights.reduce(0, +)
            #expect(abs(end.fractionCompleted - expected) < 1e-9, "step \(step) ends at \(end.fractionCompleted), not \(expected)")
        }
        #expect(abs((all.last { $0.step == 2 }?.fractionCompleted ?? 0) - 0.25) < 1e-9)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted && $0.elapsed <= $1.elapsed })

        let validation = all.filter { $0.stage == .validateAndSave }
        #expect(!validation.isEmpty && validation.allSatisfy { if case .entity = $0.subject { true } else { false } })
        #expect(validation.contains { $0.subject == .entity("Publication") && $0.instancesDone == 4 && $0.instancesTotal == 4 })
        #expect(validation.contains { $0.subject == .entity("Page") && $0.instancesDone == 12 && $0.instancesTotal == 12 })
        let mapped = all.filter { $0.stage == .createInstances || $0.stage == .createRelationships }
        #expect(!mapped.isEmpty && mapped.allSatisfy { $0.entityMapping != nil && $0.instancesDone <= $0.instancesTotal })

        #expect(all.filter { $0.fractionCompleted > 0 }.allSatisfy { $0.estimatedTimeRemaining != nil })
        #expect(all.last?.estimatedTimeRemaining == .zero)
    }
}

/// Collects progress reports from the migration's task.
final class ProgressLog: Sendable {
    private let reports = Mutex<[MigrationProgress]>([])
    func append(_ progress: MigrationProgress) { reports.withLock { $0.append(progress) } }
    var all: [MigrationProgress] { reports.withLock { $0 } }
}

func fixtureURL(version: Int) -> URL {
    packageRoot.appendingPathComponent("Tests/Fixtures/BookStore/BookStore\(version).sqlite")
}

/// Copies a frozen store into `directory` as `bookstore.sqlite`.
func copyFixture(version: Int, into directory: URL) throws -> StoreURL {
    let destination = directory.appendingPathComponent("bookstore.sqlite")
    try FileManager.default.copyItem(at: fixtureURL(version: version), to: destination)
    return .sqlite(destination.path)
}

/// Files a migration left beside the store (work folders, WAL files).
func leftovers(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "bookstore.sqlite" }
}
