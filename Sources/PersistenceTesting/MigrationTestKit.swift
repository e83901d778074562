import Foundation
import Logging
import Persistence
import Testing

/// What a user's test suite needs to test its migrations, on every engine it chooses, the
/// way Android Room's `MigrationTestHelper` does: a store made at any version from the model
/// alone with the rows the test gives, migrated to any later version by the app's chain,
/// every path vN → current run, and the migrated store compared with what its version creates.
///
/// ```swift
/// @Test(arguments: TestEngine.allCases)
/// func everyVersionMigratesToTheCurrentOne(engine: TestEngine) async throws {
///     let kit = MigrationTestKit(chain: try AppMigration.chain(), engine: engine, logger: logger)
///     try await kit.forEveryPath(rows: { model in rows(at: model) }) { url, from in
///         let titles = try await kit.values("title", of: "Publication", in: url)
///         #expect(titles.count == 2, "from \(from.name)")
///     }
/// }
/// ```
public struct MigrationTestKit: Sendable {
    /// The app's chain: its model versions, mapping models and policies.
    public let chain: MigrationChain
    /// The engine the kit's stores are made on.
    public let engine: TestEngine
    /// Where the migrations log.
    public let logger: Logger

    /// A kit for `chain`'s versions on `engine`.
    public init(chain: MigrationChain, engine: TestEngine, logger: Logger) {
        self.chain = chain
        self.engine = engine
        self.logger = logger
    }

    /// The model version named `name`.
    ///
    /// - Throws: ``MigrationTestKitError`` when the chain has no such version.
    public func model(named name: String) throws -> ManagedObjectModel {
        guard let model = chain.models.version(named: name) else {
            throw MigrationTestKitError(
                "the chain has no model version '\(name)'; its versions are \(chain.models.versions.map { "'\($0.name)'" }.joined(separator: ", "))"
            )
        }
        return model
    }

    /// Runs `body` with a new store of ``engine`` at `version`, holding `rows` (saved in one
    /// save), removed afterwards.
    ///
    /// - Throws: `FixtureError` for a row of an entity, attribute, relationship or label the
    ///   version does not have; what the save throws.
    public func withStore<T>(at version: String, rows: [FixtureRow], _ body: (StoreURL) async throws -> T) async throws -> T {
        let model = try model(named: version)
        return try await engine.withStoreURL { url in
            try await FixtureRow.write(rows, into: url, model: model, logger: logger)
            return try await body(url)
        }
    }

    /// Runs `body` with a copy of the frozen store `fixture` (a SQLite file the test suite
    /// keeps, as `persistence fixture` writes one) on ``engine``: the file copied into a new
    /// folder, or copied into a new PostgreSQL database with its version, rows and keys.
    /// The fixture itself is only read.
    public func withCopy<T>(ofFixture fixture: URL, _ body: (StoreURL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fixture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard FileManager.default.fileExists(atPath: fixture.path) else {
            throw MigrationTestKitError("there is no fixture at \(fixture.path)")
        }
        let copy = folder.appendingPathComponent(fixture.lastPathComponent)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: fixture.path + suffix) {
            try FileManager.default.copyItem(atPath: fixture.path + suffix, toPath: copy.path + suffix)
        }
        switch engine {
        case .sqlite:
            return try await body(.sqlite(copy.path))
        case .postgres:
            return try await engine.withStoreURL { url in
                try await StoreCopy.copy(from: .sqlite(copy.path), to: url, versions: chain.models, logger: logger)
                return try await body(url)
            }
        }
    }

    /// Migrates the store at `url` by the chain to `target` (the current version when
    /// `nil`), as the app migrates it; returns the plan it ran. A `target` before the
    /// store's version takes it back, dropping what later versions added only with
    /// `acceptingDataLoss` (``ProgressiveMigrator/migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``).
    ///
    /// ```swift
    /// try await kit.migrate(url, to: "BookStore 4", acceptingDataLoss: true) // a BookStore 5 store, back
    /// ```
    @discardableResult
    public func migrate(_ url: StoreURL, to target: String? = nil, acceptingDataLoss: Bool = false) async throws -> MigrationPlan {
        // Named, as a test means it: a store the test took back is taken forward again.
        try await ProgressiveMigrator(chain: chain, logger: logger).migrateStore(
            at: url,
            to: target ?? chain.models.current.name,
            acceptingDataLoss: acceptingDataLoss
        )
    }

    /// For each version before `target` (the current version when `nil`), in the order of the
    /// model's versions, oldest first (none before it throws ``MigrationTestKitError``): a
    /// store at that version with `rows(version)`, migrated to `target`, expected laid out
    /// as `target` creates it (``expectLayoutMatches(_:version:sourceLocation:)``), then
    /// `check(url, version)`. Every path vN → target of the chain, on ``engine``.
    public func forEveryPath(
        to target: String? = nil,
        rows: (ManagedObjectModel) -> [FixtureRow],
        sourceLocation: SourceLocation = #_sourceLocation,
        _ check: (StoreURL, ManagedObjectModel) async throws -> Void
    ) async throws {
        let destination = try target.map(model(named:)) ?? chain.models.current
        let versions = chain.models.versions
        guard let end = versions.firstIndex(where: { $0.name == destination.name }), end > 0 else {
            throw MigrationTestKitError("no version comes before '\(destination.name)' in the chain: there is no path to test")
        }
        for source in versions[..<end] {
            try await withStore(at: source.name, rows: rows(source)) { url in
                try await migrate(url, to: destination.name)
                try await expectLayoutMatches(url, version: destination.name, sourceLocation: sourceLocation)
                try await check(url, source)
            }
        }
    }

    /// Expects the store at `url` to be laid out as `version` creates it (tables, columns,
    /// types, entity numbers, the model's indexes: ``PersistentStore/layoutDifferences(at:model:)``);
    /// records an issue naming each difference otherwise.
    public func expectLayoutMatches(_ url: StoreURL, version: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let found = try await PersistentStore.layoutDifferences(at: url, model: try model(named: version))
        #expect(found.differences.isEmpty, "not laid out as '\(version)' creates it: \(found.differences)", sourceLocation: sourceLocation)
    }

    /// The values of `attribute` of every `entity` row in the store at `url`, read at the
    /// store's version, sorted by their description (an order for comparing two such lists,
    /// not a numeric one): what a test compares with the rows it wrote.
    ///
    /// - Throws: ``MigrationTestKitError`` when the store's version has no such entity or
    ///   attribute (a misspelt name would otherwise read as NULLs).
    public func values(_ attribute: String, of entity: String, in url: StoreURL) async throws -> [AttributeValue] {
        let name = try await PersistentStore.metadata(at: url).modelVersionName
        let model = try name.map(model(named:)) ?? chain.models.current
        guard let described = model.entity(named: entity), model.attribute(named: attribute, of: described) != nil else {
            throw MigrationTestKitError("'\(model.name)' has no attribute \(entity).\(attribute)")
        }
        let container = try await PersistentContainer.open(model: model, store: url, options: .readOnly, logger: logger)
        do {
            let objects = try await container.newContext().fetch(FetchRequest(entityName: entity))
            let values = objects.map { $0.value(forKey: attribute) }.sorted { "\($0)" < "\($1)" }
            await container.store.close()
            return values
        } catch {
            await container.store.close()
            throw error
        }
    }
}

/// A test's rows or version that the chain's models do not have.
public struct MigrationTestKitError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the version and the entity, attribute, relationship or label.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
