import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

extension StoreURL {
    /// The engine of a SQLite or PostgreSQL store URL.
    var testEngine: TestEngine {
        guard let engine = TestEngine(self) else { preconditionFailure("an in-memory store has no migration engine") }
        return engine
    }

    /// The same store in another PostgreSQL schema of the same database; another file in
    /// the same folder on SQLite.
    func sibling(_ name: String) -> StoreURL {
        switch kind {
        case .sqlite(let path):
            return .sqlite(URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("\(name).sqlite").path)
        case .postgres(var configuration):
            configuration.schema = name.lowercased()
            return .postgres(configuration)
        case .memory:
            preconditionFailure("an in-memory store has no siblings")
        }
    }
}

/// Creates the store at `url` for `model`, lets `body` fill it, then closes it: on SQLite
/// checkpointed, so the whole store is in the one file and no WAL is left beside it. With
/// `numbering`, the store's entities are numbered so, as another framework or an earlier
/// release wrote it (see ``createStore(at:model:numbering:)``).
func makeClosedStore(
    at url: StoreURL,
    model: ManagedObjectModel,
    numbering: EntityNumbering? = nil,
    _ body: (PersistentContainer) async throws -> Void = { _ in }
) async throws {
    if let numbering {
        try createStore(at: url, model: model, numbering: numbering)
        try await withOpenStore(url, model: model, body)
        return
    }
    if case .sqlite(let path) = url.kind {
        try await makeClosedStore(at: path, model: model, body)
        return
    }
    let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: testLogger)
    do {
        try await body(container)
    } catch {
        await container.store.close()
        throw error
    }
    await container.store.close()
}

/// The numbering of this framework's first releases, which numbered entities in name
/// order; stores they created keep it. Required to differ from a new store's, as it does
/// for a model with sub-entities.
func legacyNumbering(of model: ManagedObjectModel, sourceLocation: SourceLocation = #_sourceLocation) throws -> EntityNumbering {
    let legacy = EntityNumbering.nameOrder(model)
    try #require(legacy != StoreSchema.newStoreNumbering(model), "\(model.name) is numbered alike either way", sourceLocation: sourceLocation)
    return legacy
}

/// Creates an empty store of `model` at `url` on a connection of its own, its entities
/// numbered by `numbering`: a store as another framework or an earlier release wrote it.
func createStore(at url: StoreURL, model: ManagedObjectModel, numbering: EntityNumbering) throws {
    let metadata = StoreMetadata(model: model, storeType: url.storeType)
    switch url.kind {
    case .sqlite(let path):
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.transaction { try StoreCreation.create(model: model, metadata: metadata, on: connection, numbering: numbering) }
        connection.close()
    case .postgres(let configuration):
        let connection = try PostgresConnection(configuration: configuration)
        try connection.transaction {
            try connection.execute(rawSQL: "CREATE SCHEMA IF NOT EXISTS \(configuration.quotedSchema)")
            try StoreCreation.create(model: model, metadata: metadata, on: connection, numbering: numbering)
        }
    case .memory:
        preconditionFailure("an in-memory store lasts as long as its connection")
    }
}

/// Runs `body` on a connection of its own to the store at `url` (``PersistentStore/inspect(_:_:)``).
func inspectStore<T: Sendable>(_ url: StoreURL, _ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
    try await PersistentStore.inspect(url, body)
}

/// The rows of a query on the store at `url` (see ``inspectStore(_:_:)``), each as its
/// values. The SQL is written as for SQLite: Core Data's upper-case names (PostgreSQL folds
/// them) and `?` placeholders (numbered on PostgreSQL).
func storeRows(_ url: StoreURL, _ sql: String, _ arguments: [DatabaseValue] = []) async throws -> [[DatabaseValue]] {
    let sql = url.testEngine.dialect.numberingPlaceholders(sql)
    return try await inspectStore(url) { try $0.rows(rawSQL: sql, arguments).map(\.values) }
}

/// Runs `body` on a writable connection of its own to the store at `url`: to put a store
/// into a shape the framework would not write (an earlier release's, a damaged one).
func inspectWritable(_ url: StoreURL, _ body: (any DatabaseConnection) throws -> Void) async throws {
    switch url.kind {
    case .sqlite(let path):
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        defer { connection.close() }
        try body(connection)
    case .postgres(let configuration):
        let connection = try PostgresConnection(configuration: configuration)
        defer { connection.close() }
        try body(connection)
    case .memory:
        Issue.record("an in-memory store has no connection of its own")
    }
}

/// Opens the store at `url` with `model` (an existing one, unless `options` say otherwise),
/// runs `body`, and closes the store.
func withOpenStore<T>(
    _ url: StoreURL,
    model: ManagedObjectModel,
    options: PersistentStore.Options = .existingOnly,
    _ body: (PersistentContainer) async throws -> T
) async throws -> T {
    let container = try await PersistentContainer.open(model: model, store: url, options: options, logger: testLogger)
    do {
        let result = try await body(container)
        await container.store.close()
        return result
    } catch {
        await container.store.close()
        throw error
    }
}

/// The names of the indexes the store at `url` has beside its primary keys, lower-cased.
func storeIndexNames(_ url: StoreURL) async throws -> Set<String> {
    let sql =
        url.testEngine == .postgres
        ? "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey'"
        : "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    return Set(try await storeRows(url, sql).compactMap { $0.first?.text?.lowercased() })
}

/// The indexes a store of `model` is created with (foreign keys, `Z_ENT`, join destinations), lower-cased.
func schemaIndexNames(_ model: ManagedObjectModel, engine: TestEngine) -> Set<String> {
    let schema = StoreSchema(model: model, dialect: engine.dialect)
    let indexes = schema.rootTables.flatMap { schema.indexes(of: $0) } + schema.allJoinTables.flatMap { schema.indexes(of: $0) }
    return Set(indexes.map { $0.name.replacingOccurrences(of: "\"", with: "").lowercased() })
}

/// Expects the store at `url` to have every index a store of `model` is created with, and
/// no other: a migration that deferred them while writing built them before handing over.
func expectEveryIndex(_ url: StoreURL, of model: ManagedObjectModel, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let expected = schemaIndexNames(model, engine: url.testEngine)
    #expect(!expected.isEmpty, sourceLocation: sourceLocation)
    #expect(try await storeIndexNames(url) == expected, sourceLocation: sourceLocation)
}
