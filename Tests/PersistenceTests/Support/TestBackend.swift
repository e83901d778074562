import Foundation
import Logging
import PersistenceTesting
import Testing

@testable import Persistence

let testLogger = Logger(label: "persistence-tests") { _ in SwiftLogNoOpLogHandler() }

/// Opens a new store of `backend` for `model`, runs `body`, closes and removes the store.
func withContainer<T>(_ backend: TestBackend, model: ManagedObjectModel, _ body: (PersistentContainer) async throws -> T) async throws -> T {
    try await backend.withStoreURL(fileName: "store.sqlite") { url in
        try await withOpenStore(url, model: model, options: .createIfMissing, body)
    }
}
