import Foundation
import Persistence
import PersistenceTesting
import Synchronization

/// Where a benchmark's stores live: new ones, identical copies, and the bare database
/// under a store for hand-written SQL.
protocol BenchmarkBackend: Sendable {
    /// `sqlite` or `postgres`, as the report names it.
    var name: String { get }
    var dialect: any SQLDialect { get }
    /// A location for a new store.
    func newStore(_ label: String) async throws -> StoreURL
    /// A copy of the (closed) store at `url`.
    func copy(_ url: StoreURL, label: String) async throws -> StoreURL
    /// The database under a store, opened bare: no metadata check, no model; a writer
    /// only, or with `readers` the reader connections a store opens by default.
    func openDatabase(_ url: StoreURL, readers: Bool) async throws -> any Database
    /// Removes every store this backend made.
    func removeAll() async
}

extension BenchmarkBackend {
    /// The database under a store, a writer only: for hand-written SQL and comparisons.
    func openDatabase(_ url: StoreURL) async throws -> any Database {
        try await openDatabase(url, readers: false)
    }
}

/// Stores as files in a work folder; copies are file copies.
struct SQLiteBenchmarkBackend: BenchmarkBackend {
    let folder: URL
    private let ownsFolder: Bool

    init(folder: String?) throws {
        if let folder {
            self.folder = URL(fileURLWithPath: folder)
            ownsFolder = false
        } else {
            self.folder = FileManager.default.temporaryDirectory.appendingPathComponent("bookstore-benchmark-\(UUID().uuidString.prefix(8))")
            ownsFolder = true
        }
        try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
    }

    var name: String { "sqlite" }
    var dialect: any SQLDialect { SQLiteDialect() }

    private func path(_ label: String) -> String { folder.appendingPathComponent("\(label).sqlite").path }

    func newStore(_ label: String) async throws -> StoreURL {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path(label) + suffix) }
        return .sqlite(path(label))
    }

    func copy(_ url: StoreURL, label: String) async throws -> StoreURL {
        guard case .sqlite(let source) = url.kind else { preconditionFailure("not a SQLite store: \(url)") }
        let target = try await newStore(label)
        try FileManager.default.copyItem(atPath: source, toPath: path(label))
        return target
    }

    func openDatabase(_ url: StoreURL, readers: Bool) async throws -> any Database {
        guard case .sqlite(let path) = url.kind else { preconditionFailure("not a SQLite store: \(url)") }
        return readers
            ? try await SQLiteDatabase.open(path: path, mode: .readWrite)
            : try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: 0)
    }

    func removeAll() async {
        if ownsFolder { try? FileManager.default.removeItem(at: folder) }
    }
}

/// Stores in databases of their own on a throwaway server (or the `--postgres-url` one);
/// copies are made by the server (`CREATE DATABASE … TEMPLATE`).
final class PostgresBenchmarkBackend: BenchmarkBackend {
    private let databases = Mutex<[StoreURL: TestPostgresDatabase]>([:])

    var name: String { "postgres" }
    var dialect: any SQLDialect { PostgresDialect() }

    func newStore(_ label: String) async throws -> StoreURL {
        let database = try await TestPostgres.makeDatabase()
        databases.withLock { $0[database.url] = database }
        return database.url
    }

    func copy(_ url: StoreURL, label: String) async throws -> StoreURL {
        guard let original = databases.withLock({ $0[url] }) else { preconditionFailure("not a store of this backend: \(url)") }
        let copy = try await original.copy()
        databases.withLock { $0[copy.url] = copy }
        return copy.url
    }

    func openDatabase(_ url: StoreURL, readers: Bool) async throws -> any Database {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("not a PostgreSQL store: \(url)") }
        return readers
            ? try await PostgresDatabase.open(configuration)
            : try await PostgresDatabase.open(configuration, readerCount: 0)
    }

    func removeAll() async {
        let all = databases.withLock { state in
            defer { state = [:] }
            return Array(state.values)
        }
        for database in all { try? await database.drop() }
    }
}
