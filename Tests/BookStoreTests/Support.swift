import Foundation
import Logging
import PersistenceTesting
import Testing
@testable import BookStore
import BookStoreTesting
@testable import Persistence

/// The backends the BookStore store tests run on.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case memory
    /// A database of its own on the test server (see `TestPostgres`).
    case postgres

    var testDescription: String { rawValue }
}

/// A SQLite store's URL in `directory`.
func sqliteStoreURL(in directory: URL) -> StoreURL {
    .sqlite(directory.appendingPathComponent("bookstore.sqlite").path)
}

/// Runs `body` with the URL of a new, empty store of `backend`, removed afterwards.
func withStoreURL<T>(_ backend: Backend, _ body: (StoreURL) async throws -> T) async throws -> T {
    switch backend {
    case .sqlite:
        return try await StoreEngine.sqlite.withStoreURL(fileName: "bookstore.sqlite", body)
    case .memory:
        return try await body(StoreURL(kind: .memory(name: "bookstore-\(UUID().uuidString)")))
    case .postgres:
        return try await StoreEngine.postgres.withStoreURL(fileName: "bookstore.sqlite", body)
    }
}
