import Foundation
import Logging

/// A store in memory, on SQLite: gone when the last container holding it closes. Named
/// ones (`memory:name`) are shared by the containers of one process.
struct InMemoryEngine: StoreEngine {
    let url: StoreURL
    let name: String

    var dialect: any SQLDialect { SQLiteDialect() }
    var storeType: String { "InMemory" }
    var scheme: String { "memory" }
    var filePath: String? { nil }
    var displayURL: String { "memory:\(name)" }

    func open(model: ManagedObjectModel, options: PersistentStore.Options, logger: Logger) async throws -> PersistentStore {
        let path = name.isEmpty ? ":memory:" : "file:\(name)?mode=memory&cache=shared"
        let database = try await SQLiteDatabase.open(path: path, mode: .readWriteCreate, readerCount: 0)
        let existing: StoreMetadata?
        do {
            existing = try await database.read { try StoreMetadata.read(from: $0) }
        } catch var error as StoreError where error.store == nil {
            error.store = url.description
            throw error
        }
        if let existing {
            try PersistentStore.check(existing, isCompatibleWith: model, store: url)
            let layout = try await database.read { try StoreLayout.read(from: $0, model: model) }
            return PersistentStore(
                url: url,
                model: model,
                database: database,
                metadata: existing,
                layout: layout,
                logger: logger,
                checksModelVersion: options.checksModelVersionOnWrite
            )
        }
        let metadata = StoreMetadata(model: model, storeType: storeType)
        try await database.write { try StoreCreation.create(model: model, metadata: metadata, on: $0) }
        return PersistentStore(
            url: url,
            model: model,
            database: database,
            metadata: metadata,
            layout: nil,
            logger: logger,
            checksModelVersion: options.checksModelVersionOnWrite
        )
    }

    func checkWritable() throws(StoreError) {}

    func metadata() async throws -> StoreMetadata {
        throw StoreError(.storeNotFound, "an in-memory store has no metadata until it is opened", store: url.description)
    }

    func inspect<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        throw StoreError(
            .unsupported,
            "an in-memory store cannot be inspected from outside its process",
            hint: "inspect it through the PersistentStore that holds it",
            store: url.description
        )
    }

    func checkListable() throws(StoreError) {
        throw StoreError(
            .unsupported,
            "an in-memory store has no tables until it is opened",
            hint: "inspect a sqlite:// or postgres:// store",
            store: url.description
        )
    }

    func destroy(logger: Logger) async throws {
        throw StoreError(
            .unsupported,
            "an in-memory store goes when the last container holding it closes",
            hint: "close the containers that hold it",
            store: url.description
        )
    }

    func copyTarget(replace: Bool) throws(StoreError) -> any StoreCopyTarget {
        throw StoreError(
            .unsupported,
            "an in-memory store is gone when the copy ends",
            hint: "copy into a sqlite:// or postgres:// store",
            store: url.description
        )
    }

    var migrationDialect: (any SQLDialect)? { nil }

    func migrationBackend() throws(MigrationError) -> any MigrationBackend {
        throw MigrationError(.store, "an in-memory store cannot be migrated", hint: "create it with the current model", store: url.description)
    }

    func sourceAccess(reading source: StoreURL) -> SourceAccess? { nil }

    func appleStoreStructure() throws -> StoreStructure? { nil }

    /// Migrated through open stores, which read it themselves.
    func storeLayout(model: ManagedObjectModel) async throws -> StoreLayout? { nil }
}
