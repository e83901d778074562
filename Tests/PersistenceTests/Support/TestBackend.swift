import Foundation
import Logging
import Testing
@testable import Persistence

/// The backends every store test runs on.
enum TestBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case memory

    var testDescription: String { rawValue }

    /// A fresh, empty store URL of this backend, and a clean-up to call afterwards.
    func makeStoreURL() -> (StoreURL, @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistence-tests-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("store.sqlite").path
            return (.sqlite(path), { try? FileManager.default.removeItem(at: directory) })
        case .memory:
            return (StoreURL(kind: .memory(name: "test-\(UUID().uuidString)")), {})
        }
    }
}

let testLogger = Logger(label: "persistence-tests") { _ in SwiftLogNoOpLogHandler() }

/// Opens a new store of `backend` for `model`, runs `body`, removes the store.
func withContainer<T>(_ backend: TestBackend, model: ManagedObjectModel, _ body: (PersistentContainer) async throws -> T) async throws -> T {
    let (url, cleanUp) = backend.makeStoreURL()
    defer { cleanUp() }
    let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: testLogger)
    return try await body(container)
}
