import Foundation
import Persistence
import Testing

/// The engines a store test runs on: the one parameter list of every test target, so that
/// a test of behaviour that is no engine's own runs on each.
///
/// ```swift
/// @Test(arguments: TestEngine.allCases)
/// func savesAndReads(engine: TestEngine) async throws {
///     try await engine.withStoreURL { url in … }
/// }
/// ```
public enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// A file in a new temporary folder.
    case sqlite
    /// The `public` schema of a new database on the test server (see ``TestPostgres``).
    case postgres

    /// The engine's name in test results: `sqlite` or `postgres`.
    public var testDescription: String { rawValue }

    /// How the engine spells SQL.
    public var dialect: any SQLDialect {
        switch self {
        case .sqlite: SQLiteDialect()
        case .postgres: PostgresDialect()
        }
    }

    /// The engine of a SQLite or PostgreSQL store's URL; `nil` for an in-memory store.
    public init?(_ url: StoreURL) {
        switch url.kind {
        case .sqlite: self = .sqlite
        case .postgres: self = .postgres
        case .memory: return nil
        }
    }

    /// Runs `body` with the URL of a new, empty store of this engine, removed afterwards: a
    /// file named `fileName` in a new temporary folder, or the `public` schema of a new
    /// database.
    public func withStoreURL<T>(fileName: String = "store.sqlite", _ body: (StoreURL) async throws -> T) async throws -> T {
        switch self {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try await body(.sqlite(folder.appendingPathComponent(fileName).path))
        case .postgres:
            return try await TestPostgres.withDatabase(body)
        }
    }
}
