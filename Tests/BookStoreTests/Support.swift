import Foundation
import Logging
import PersistenceTesting
import Testing
@testable import BookStore
@testable import Persistence

let quietLogger = Logger(label: "bookstore-tests") { _ in SwiftLogNoOpLogHandler() }

/// The package root: Tests/BookStoreTests/Support.swift → three levels up.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func loadModels() throws -> BookStoreModels {
    try BookStoreModels.load(from: packageRoot.appendingPathComponent("Migrations"))
}

func loadCatalogue() throws -> Catalogue {
    try Catalogue.load(from: packageRoot.appendingPathComponent("Seeds"))
}

/// The backends the BookStore store tests run on.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case memory
    /// A database of its own on the test server (see `TestPostgres`).
    case postgres

    var testDescription: String { rawValue }
}

/// A temporary folder, removed by the returned clean-up.
func temporaryDirectory() -> (URL, @Sendable () -> Void) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bookstore-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (directory, { try? FileManager.default.removeItem(at: directory) })
}

/// A SQLite store's URL in `directory`.
func sqliteStoreURL(in directory: URL) -> StoreURL {
    .sqlite(directory.appendingPathComponent("bookstore.sqlite").path)
}

/// Runs `body` with the URL of a new, empty store of `backend`, removed afterwards.
func withStoreURL<T>(_ backend: Backend, _ body: (StoreURL) async throws -> T) async throws -> T {
    switch backend {
    case .sqlite:
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        return try await body(sqliteStoreURL(in: directory))
    case .memory:
        return try await body(StoreURL(kind: .memory(name: "bookstore-\(UUID().uuidString)")))
    case .postgres:
        return try await TestPostgres.withDatabase(body)
    }
}
