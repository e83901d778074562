import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Building, migrating and inspecting stores for the in-place migration tests.
enum InPlaceFixtures {
    /// A model version from the body of a `contents` document.
    static func model(_ name: String, _ body: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(xml: ModelFixtures.xml(body, identifier: name), name: name, file: ModelFixtures.file)
    }

    /// The in-place plan of the inferred mapping between two versions; fails if there is none.
    static func plan(
        _ source: ManagedObjectModel,
        _ destination: ManagedObjectModel,
        dialect: any SQLDialect = SQLiteDialect()
    ) throws -> InPlaceMigration {
        let mapping = try MappingModel.inferred(from: source, to: destination)
        return try InPlaceMigration.plan(mapping: mapping, source: source, destination: destination, dialect: dialect).get()
    }

    /// Why the inferred mapping between two versions cannot run in place, or `nil` if it can.
    static func unsupported(_ source: ManagedObjectModel, _ destination: ManagedObjectModel) throws -> InPlaceMigration.Unsupported? {
        let mapping = try MappingModel.inferred(from: source, to: destination)
        if case .failure(let reason) = InPlaceMigration.plan(mapping: mapping, source: source, destination: destination, dialect: .sqlite) {
            return reason
        }
        return nil
    }

    /// Runs `migration` on the closed store at `url` in one transaction, with metadata for
    /// `destination` that keeps the store's UUID; closes the store again afterwards.
    static func run(_ migration: InPlaceMigration, on url: StoreURL, destination: ManagedObjectModel) async throws {
        switch url.kind {
        case .sqlite(let path):
            try await run(migration, on: path, destination: destination)
        case .postgres(let configuration):
            let database = try await PostgresDatabase.open(configuration, readerCount: 0)
            do {
                try await database.write { connection in
                    guard let old = try StoreMetadata.read(from: connection) else { throw StoreError(.missingMetadata, "no metadata") }
                    try migration.run(on: connection, metadata: StoreMetadata(model: destination, storeType: old.storeType, storeUUID: old.storeUUID))
                }
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        case .memory:
            preconditionFailure("an in-memory store does not migrate")
        }
    }

    /// Runs `migration` on the closed SQLite store at `path`, then waits until it is closed.
    private static func run(_ migration: InPlaceMigration, on path: String, destination: ManagedObjectModel) async throws {
        do {
            let database = try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: 0)
            try await database.write { connection in
                guard let old = try StoreMetadata.read(from: connection) else { throw StoreError(.missingMetadata, "no metadata") }
                try migration.run(on: connection, metadata: StoreMetadata(model: destination, storeType: old.storeType, storeUUID: old.storeUUID))
            }
            try await database.checkpoint()
        }
        try await waitUntilClosed(path)
    }

    /// Plans and runs the inferred mapping from `source` to `destination` on the store at
    /// `url`, in the store's dialect.
    @discardableResult
    static func migrate(_ url: StoreURL, from source: ManagedObjectModel, to destination: ManagedObjectModel) async throws -> InPlaceMigration {
        let migration = try plan(source, destination, dialect: url.testEngine.dialect)
        try await run(migration, on: url, destination: destination)
        return migration
    }

    /// Waits until the last connection is gone and SQLite removed the WAL files.
    static func waitUntilClosed(_ path: String) async throws {
        try await waitUntilWriteAheadLogIsRemoved(path)
    }

    /// Opens the migrated store with the destination model, the way an app would.
    static func open(_ url: StoreURL, _ model: ManagedObjectModel) async throws -> PersistentContainer {
        try await PersistentContainer.open(model: model, store: url, logger: testLogger)
    }

    /// Expects the store at `url` to have exactly the schema a fresh store of `model` has:
    /// one made in a new folder on SQLite, in a schema beside the store on PostgreSQL.
    static func expectFreshSchema(_ url: StoreURL, _ model: ManagedObjectModel, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let expected: SchemaSnapshot
        switch url.kind {
        case .postgres:
            let fresh = url.sibling("fresh_\(UUID().uuidString.prefix(8).lowercased())")
            try await makeClosedStore(at: fresh, model: model)
            expected = try await SchemaSnapshot(fresh)
        default:
            let fresh = makeStoreFolder()
            defer { fresh.cleanUp() }
            try await makeClosedStore(at: fresh.path, model: model)
            expected = try SchemaSnapshot(path: fresh.path)
        }
        let actual = try await SchemaSnapshot(url)
        #expect(!expected.columns.isEmpty && !expected.entities.isEmpty, sourceLocation: sourceLocation)
        #expect(actual.columns == expected.columns, "tables and columns", sourceLocation: sourceLocation)
        #expect(actual.indexes == expected.indexes, "indexes", sourceLocation: sourceLocation)
        #expect(actual.entities == expected.entities, "Z_PRIMARYKEY", sourceLocation: sourceLocation)
        let metadata = try await PersistentStore.metadata(at: url)
        #expect(model.isCompatible(with: metadata), "metadata of the destination model", sourceLocation: sourceLocation)
    }

    /// The objects of an entity, sorted by a key.
    static func objects(_ context: ManagedObjectContext, _ entity: String, by key: String) async throws -> [ManagedObject] {
        try await context.fetch(FetchRequest(entityName: entity, sortDescriptors: [FetchRequest.SortDescriptor(key: key)]))
    }
}

/// A migration's statements in upper case, so one expectation reads for both engines
/// (PostgreSQL's names are lower case), with the engine's placeholders and column types.
struct SQLSpelling {
    let statements: [String]
    let dialect: any SQLDialect

    init(_ migration: InPlaceMigration, _ engine: TestEngine) {
        statements = migration.statements.map { $0.uppercased() }
        dialect = engine.dialect
    }

    /// The first placeholder: `?` or `$1`.
    var placeholder: String { dialect.placeholder(1) }

    /// The column type of an attribute type, in upper case.
    func type(_ type: AttributeType) -> String { dialect.columnType(for: type).uppercased() }
}

/// A store's schema as `sqlite_master` and the table PRAGMAs describe it (PostgreSQL: its
/// catalogue), for comparing a migrated store with a fresh one. Column order is left out:
/// ALTER TABLE appends.
struct SchemaSnapshot: Equatable {
    /// Table → its columns as `NAME TYPE` (with `pk n` for primary-key columns), sorted.
    var columns: [String: [String]] = [:]
    /// Index → `TABLE(COLUMN, …)`, SQLite's automatic indexes included.
    var indexes: [String: String] = [:]
    /// `Z_PRIMARYKEY` without the counters: `Z_ENT Z_NAME Z_SUPER`.
    var entities: [String] = []
    /// `Z_NAME` → `Z_MAX`.
    var maxima: [String: Int64] = [:]

    init(_ url: StoreURL) async throws {
        guard case .postgres(let configuration) = url.kind else {
            guard case .sqlite(let path) = url.kind else { preconditionFailure("an in-memory store has no schema") }
            try self.init(path: path)
            return
        }
        let schema = DatabaseValue.text(configuration.schema)
        self = try await inspectStore(url) { connection in
            var snapshot = SchemaSnapshot()
            var primaryKeys: [String: Int64] = [:]
            for row in try connection.rows(
                rawSQL: """
                    SELECT k.table_name, k.column_name, k.ordinal_position FROM information_schema.key_column_usage k
                    JOIN information_schema.table_constraints c ON c.constraint_schema = k.constraint_schema AND c.constraint_name = k.constraint_name
                    WHERE c.constraint_type = 'PRIMARY KEY' AND k.table_schema = $1
                    """,
                [schema]
            ) {
                primaryKeys["\(row[0].text ?? "?").\(row[1].text ?? "?")"] = row[2].int64
            }
            for row in try connection.rows(
                rawSQL: "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = $1",
                [schema]
            ) {
                let (table, column) = (row[0].text ?? "?", row[1].text ?? "?")
                let pk = primaryKeys["\(table).\(column)"]
                snapshot.columns[table, default: []].append("\(column) \(row[2].text ?? "?")" + (pk.map { " pk \($0)" } ?? ""))
            }
            for table in snapshot.columns.keys { snapshot.columns[table]?.sort() }
            for row in try connection.rows(
                rawSQL: """
                    SELECT c.relname, t.relname, (SELECT string_agg(a.attname, ', ' ORDER BY k.position)
                        FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
                        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
                    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
                    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
                    """,
                [schema]
            ) {
                snapshot.indexes[row[0].text ?? "?"] = "\(row[1].text ?? "?")(\(row[2].text ?? ""))"
            }
            try snapshot.readPrimaryKeyTable(connection)
            return snapshot
        }
    }

    private init() {}

    private mutating func readPrimaryKeyTable(_ connection: any DatabaseConnection) throws {
        for row in try connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
            entities.append("\(row[0].int64 ?? -1) \(row[1].text ?? "?") \(row[2].int64 ?? -1)")
            maxima[row[1].text ?? "?"] = row[3].int64
        }
    }

    init(path: String) throws {
        let connection = try SQLiteConnection(readingStoreAt: path)
        for row in try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'") {
            guard let table = row[0].text else { continue }
            columns[table] = try connection.rows(rawSQL: "PRAGMA table_info(\(table))").map { column in
                let pk = column[5].int64 ?? 0
                return "\(column[1].text ?? "?") \(column[2].text ?? "?")" + (pk > 0 ? " pk \(pk)" : "")
            }.sorted()
        }
        for row in try connection.rows("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'") {
            guard let index = row[0].text, let table = row[1].text else { continue }
            let indexed = try connection.rows(rawSQL: "PRAGMA index_info(\(index))").compactMap { $0[2].text }
            indexes[index] = "\(table)(\(indexed.joined(separator: ", ")))"
        }
        try readPrimaryKeyTable(connection)
    }
}
