import Foundation
import Logging
import PersistenceTesting
import Testing
@testable import Persistence

/// The backends every store test runs on.
enum TestBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case memory
    /// A database of its own on the test server (see `TestPostgres`).
    case postgres

    var testDescription: String { rawValue }

    /// A fresh, empty store URL of this backend, and a clean-up to await afterwards (after
    /// the store is closed).
    func makeStoreURL() async throws -> (StoreURL, @Sendable () async -> Void) {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistence-tests-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("store.sqlite").path
            return (.sqlite(path), { try? FileManager.default.removeItem(at: directory) })
        case .memory:
            return (StoreURL(kind: .memory(name: "test-\(UUID().uuidString)")), {})
        case .postgres:
            let database = try await TestPostgres.makeDatabase()
            return (database.url, { try? await database.drop() })
        }
    }
}

let testLogger = Logger(label: "persistence-tests") { _ in SwiftLogNoOpLogHandler() }

/// Opens a new store of `backend` for `model`, runs `body`, closes and removes the store.
func withContainer<T>(_ backend: TestBackend, model: ManagedObjectModel, _ body: (PersistentContainer) async throws -> T) async throws -> T {
    let (url, cleanUp) = try await backend.makeStoreURL()
    let container: PersistentContainer
    do {
        container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: testLogger)
    } catch {
        await cleanUp()
        throw error
    }
    do {
        let result = try await body(container)
        await container.store.close()
        await cleanUp()
        return result
    } catch {
        await container.store.close()
        await cleanUp()
        throw error
    }
}
