import Foundation
import Persistence
import Testing

/// Every kind of store a test of stored behaviour can run on: the two engines
/// (``TestEngine``) and the in-memory store, which keeps no file and lasts as long as a
/// connection to it. One list for every test target, so that a test that holds on an
/// in-memory store too runs there as well.
///
/// ```swift
/// @Test(arguments: TestBackend.allCases)
/// func fetchesInOrder(backend: TestBackend) async throws {
///     try await backend.withStoreURL { url in … }
/// }
/// ```
public enum TestBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// A file in a new temporary folder.
    case sqlite
    /// A named in-memory store, gone when its last connection closes.
    case memory
    /// The `public` schema of a new database on the test server (see ``TestPostgres``).
    case postgres

    /// The backend's name in test results: `sqlite`, `memory` or `postgres`.
    public var testDescription: String { rawValue }

    /// The engine of a SQLite or PostgreSQL backend; `nil` for the in-memory store.
    public var engine: TestEngine? {
        switch self {
        case .sqlite: .sqlite
        case .memory: nil
        case .postgres: .postgres
        }
    }

    /// Runs `body` with the URL of a new, empty store of this backend, removed afterwards
    /// (see ``TestEngine/withStoreURL(fileName:_:)``); an in-memory store gets a name of
    /// its own.
    public func withStoreURL<T>(fileName: String = "store.sqlite", _ body: (StoreURL) async throws -> T) async throws -> T {
        guard let engine else {
            return try await body(StoreURL(kind: .memory(name: "store-\(UUID().uuidString)")))
        }
        return try await engine.withStoreURL(fileName: fileName, body)
    }
}

extension TestEngine {
    /// The backend of this engine, for a test that takes the in-memory store too.
    public var backend: TestBackend {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }
}
