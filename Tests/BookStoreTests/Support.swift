import Foundation
import Logging
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

    var testDescription: String { rawValue }
}

/// A temporary folder, removed by the returned clean-up.
func temporaryDirectory() -> (URL, @Sendable () -> Void) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bookstore-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (directory, { try? FileManager.default.removeItem(at: directory) })
}

func storeURL(_ backend: Backend, in directory: URL) -> StoreURL {
    switch backend {
    case .sqlite: .sqlite(directory.appendingPathComponent("bookstore.sqlite").path)
    case .memory: StoreURL(kind: .memory(name: "bookstore-\(UUID().uuidString)"))
    }
}
