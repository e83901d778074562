import Foundation
import Logging
import PersistenceTesting
import Testing
@testable import BookStore
import BookStoreTesting
@testable import Persistence

/// The backends the BookStore store tests run on: the list every test target shares.
typealias Backend = StoreBackend

/// A SQLite store's URL in `directory`.
func sqliteStoreURL(in directory: URL) -> StoreURL {
    .sqlite(directory.appendingPathComponent("bookstore.sqlite").path)
}

/// Runs `body` with the URL of a new, empty store of `backend`, removed afterwards.
func withStoreURL<T>(_ backend: Backend, _ body: (StoreURL) async throws -> T) async throws -> T {
    try await backend.withStoreURL(fileName: "bookstore.sqlite", body)
}
