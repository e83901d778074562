import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

/// The engines a migration test runs on, one test body for each: a SQLite file, or a
/// schema of a PostgreSQL database of the test's own (see `TestPostgres`).
///
/// ```swift
/// @Test(arguments: MigrationEngine.allCases)
/// func migrates(engine: MigrationEngine) async throws {
///     try await engine.withStoreURL { url in
///         try await makeClosedStore(at: url, model: v1) { … }
///         let before = try await StoreSnapshot(url)
///         …
///         try await expectUnchanged(url, since: before)
///     }
/// }
/// ```
enum MigrationEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    var backend: TestBackend {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    var dialect: SQLDialect {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    /// Runs `body` with the URL of a fresh store of this engine, nothing written there yet,
    /// and removes it afterwards: `store.sqlite` in a new folder, or the `public` schema of
    /// a new database.
    func withStoreURL<T>(_ body: (StoreURL) async throws -> T) async throws -> T {
        let (url, cleanUp) = try await backend.makeStoreURL()
        do {
            let result = try await body(url)
            await cleanUp()
            return result
        } catch {
            await cleanUp()
            throw error
        }
    }
}

extension StoreURL {
    /// The engine of a SQLite or PostgreSQL store URL.
    var engine: MigrationEngine {
        switch kind {
        case .sqlite: .sqlite
        case .postgres: .postgres
        case .memory: preconditionFailure("an in-memory store has no migration engine")
        }
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
/// checkpointed, so the whole store is in the one file and no WAL is left beside it.
func makeClosedStore(at url: StoreURL, model: ManagedObjectModel, _ body: (PersistentContainer) async throws -> Void = { _ in }) async throws {
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

/// Runs `body` on a connection of its own to the store at `url`, the way an outside tool
/// reads it: SQLite read-only (leaving no files behind), PostgreSQL a session of its own
/// in one read-only snapshot.
func inspectStore<T: Sendable>(_ url: StoreURL, _ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
    switch url.kind {
    case .sqlite(let path):
        let connection = try SQLiteConnection(path: SQLiteStoreFile.readOnlyURI(for: path), mode: .readOnly)
        return try body(connection)
    case .postgres(let configuration):
        let database = try await PostgresDatabase.open(configuration, readerCount: 0, readOnly: true)
        do {
            let result = try await database.read(body)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    case .memory:
        preconditionFailure("an in-memory store cannot be inspected from outside")
    }
}

/// The rows of a query on the store at `url` (see ``inspectStore(_:_:)``), each as its
/// values. The SQL is written as for SQLite: Core Data's upper-case names (PostgreSQL folds
/// them) and `?` placeholders (numbered on PostgreSQL).
func storeRows(_ url: StoreURL, _ sql: String, _ arguments: [DatabaseValue] = []) async throws -> [[DatabaseValue]] {
    let sql = url.engine.dialect.numberingPlaceholders(sql)
    return try await inspectStore(url) { try $0.rows(sql, arguments).map(\.values) }
}

/// What a store holds, to tell whether anything changed and whether a migration left
/// something behind:
///
/// - SQLite: the bytes of every file in the store's folder (a folder, such as a
///   migration's work folder, as no bytes) and the store file's modification time;
/// - PostgreSQL: every table of the store's schema with its columns and its rows in key
///   order (`z_metadata` and `z_primarykey` among them), and the database's schemas, so a
///   shadow schema left behind shows.
struct StoreSnapshot: Equatable, CustomStringConvertible {
    let engine: MigrationEngine
    /// The store file's name, or the store's schema.
    let name: String
    /// SQLite: file name → bytes.
    private(set) var files: [String: Data] = [:]
    /// SQLite: the store file's modification time.
    private(set) var modificationDate: Date?
    /// PostgreSQL: the database's schemas, the system's own left out.
    private(set) var schemas: [String] = []
    /// PostgreSQL: table → its columns (`name type`) as the first line, then its rows.
    private(set) var tables: [String: [String]] = [:]

    init(_ url: StoreURL) async throws {
        engine = url.engine
        switch url.kind {
        case .sqlite(let path):
            let store = URL(fileURLWithPath: path)
            let folder = store.deletingLastPathComponent()
            name = store.lastPathComponent
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                var isDirectory: ObjCBool = false
                let filePath = folder.appendingPathComponent(file).path
                _ = FileManager.default.fileExists(atPath: filePath, isDirectory: &isDirectory)
                files[file] = isDirectory.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: filePath))
            }
            modificationDate = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        case .postgres(let configuration):
            let schema = configuration.schema
            name = schema
            (schemas, tables) = try await inspectStore(url) { connection in
                let schemas = try connection.rows("""
                    SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1
                    """).compactMap { $0[0].text }
                var tables: [String: [String]] = [:]
                let names = try connection.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [.text(schema)])
                    .compactMap { $0[0].text }
                for table in names {
                    let columns = try connection.rows("""
                        SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position
                        """, [.text(schema), .text(table)]).map { "\($0[0].text ?? "?") \($0[1].text ?? "?")" }
                    let qualified = "\(PostgresConfiguration.quoteIdentifier(schema)).\(PostgresConfiguration.quoteIdentifier(table))"
                    let order = (1...max(columns.count, 1)).map(String.init).joined(separator: ", ")
                    let rows = try connection.rows("SELECT * FROM \(qualified) ORDER BY \(order)").map { row in
                        row.values.map(StoreSnapshot.render).joined(separator: " | ")
                    }
                    tables[table] = [columns.joined(separator: ", ")] + rows
                }
                return (schemas, tables)
            }
        case .memory:
            preconditionFailure("an in-memory store has no snapshot")
        }
    }

    static func render(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .text(let value): "'\(value)'"
        case .blob(let value): "x'" + value.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// What a migration may have left beside the store: files in its folder other than
    /// stores (work folders, WAL and lock files), or schemas named after the store's
    /// schema (`<schema>_migrating_…` shadows, `<schema>_replaced_…` old tables).
    var leftovers: [String] {
        switch engine {
        case .sqlite: files.keys.filter { !$0.hasSuffix(".sqlite") }.sorted()
        case .postgres: schemas.filter { $0.hasPrefix(name + "_") }
        }
    }

    /// How `other` differs from this snapshot, in a few words per difference.
    func differences(from other: StoreSnapshot) -> [String] {
        var result: [String] = []
        for file in Set(files.keys).union(other.files.keys).sorted() where files[file] != other.files[file] {
            switch (files[file], other.files[file]) {
            case (nil, _): result.append("\(file) appeared")
            case (_, nil): result.append("\(file) vanished")
            case (let a?, let b?): result.append("\(file): \(a.count) bytes became \(b.count) bytes, not the same")
            }
        }
        if modificationDate != other.modificationDate { result.append("the store's modification time changed") }
        if schemas != other.schemas { result.append("schemas \(schemas) became \(other.schemas)") }
        for table in Set(tables.keys).union(other.tables.keys).sorted() where tables[table] != other.tables[table] {
            switch (tables[table], other.tables[table]) {
            case (nil, _): result.append("table \(table) appeared")
            case (_, nil): result.append("table \(table) vanished")
            case (let a?, let b?):
                if a.first != b.first { result.append("table \(table): columns \(a.first ?? "") became \(b.first ?? "")") }
                let changed = Set(a.dropFirst()).symmetricDifference(b.dropFirst())
                if !changed.isEmpty || a.count != b.count {
                    result.append("table \(table): \(a.count - 1) rows became \(b.count - 1), e.g. \(changed.sorted().prefix(3))")
                }
            }
        }
        return result
    }

    /// Whether the snapshot found no store at all (nothing to compare by).
    var isEmpty: Bool {
        switch engine {
        case .sqlite: files[name] == nil
        case .postgres: tables.isEmpty
        }
    }

    var description: String {
        if engine == .sqlite { return "files \(files.keys.sorted())" }
        return "schemas \(schemas), tables \(tables.keys.sorted().map { "\($0) (\(max((tables[$0]?.count ?? 1) - 1, 0)) rows)" })"
    }
}

/// Expects the store at `url` to hold exactly what `before` found, with nothing new
/// beside it (no work folder, WAL or lock file, no shadow schema).
func expectUnchanged(_ url: StoreURL, since before: StoreSnapshot, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    #expect(!before.isEmpty, "the snapshot before found no store at \(url)", sourceLocation: sourceLocation)
    let after = try await StoreSnapshot(url)
    let differences = before.differences(from: after)
    #expect(differences.isEmpty, "the store changed: \(differences.joined(separator: "; "))", sourceLocation: sourceLocation)
}

/// Expects nothing beside the store at `url`: no work folder, WAL or lock file, no shadow schema.
func expectNoLeftovers(_ url: StoreURL, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let leftovers = try await StoreSnapshot(url).leftovers
    #expect(leftovers.isEmpty, "left beside the store: \(leftovers)", sourceLocation: sourceLocation)
}

/// Opens the existing store at `url` with `model`, runs `body`, and closes the store.
func withOpenStore<T>(_ url: StoreURL, model: ManagedObjectModel, _ body: (PersistentContainer) async throws -> T) async throws -> T {
    let container = try await PersistentContainer.open(model: model, store: url, logger: testLogger)
    do {
        let result = try await body(container)
        await container.store.close()
        return result
    } catch {
        await container.store.close()
        throw error
    }
}
