import Foundation
import Logging

extension PersistentStore {
    /// Removes the store at `url` and everything it holds, as Core Data's
    /// `destroyPersistentStore(at:type:)` does: a SQLite store's file with its `-wal`, `-shm`
    /// and `-journal` files; a PostgreSQL store's tables (every `z` table of its schema: the
    /// entity tables, join tables, `z_primarykey` and `z_metadata`), in one transaction, the
    /// schema and any other tables in it left alone. Where there is no store, nothing
    /// happens. Nothing may have the store open meanwhile.
    ///
    /// ```swift
    /// try await PersistentStore.destroy(at: url, logger: logger)
    /// let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
    /// ```
    ///
    /// - Throws: ``StoreError`` when the files cannot be removed or the server refuses,
    ///   ``StoreError/Code/storeInUse`` when another connection has a SQLite store open
    ///   (it would write on into the removed file; nothing is removed), and
    ///   ``StoreError/Code/sharedSchema`` when a PostgreSQL store's schema holds other
    ///   objects too (a store keeps its schema to itself; nothing is removed).
    public static func destroy(at url: StoreURL, logger: Logger) async throws {
        switch url.kind {
        case .sqlite(let path):
            try SQLiteStoreFile.remove(path, store: url)
        case .postgres(let configuration):
            let database = try await PostgresDatabase.open(configuration, readerCount: 0)
            do {
                let dropped = try await database.write { connection in
                    let contents = try PostgresSchemaContents.read(configuration.schema, on: connection)
                    guard contents.holdsStore else { return 0 }
                    try contents.refuse(.destroying, configuration: configuration, store: url)
                    return try contents.dropStoreTables(on: connection)
                }
                await database.close()
                logger.info("destroyed store", metadata: [LoggingKeys.store: "\(url)", "persistence.store.tables": "\(dropped)"])
            } catch {
                await database.close()
                throw error
            }
        case .memory:
            throw StoreError(.unsupported, "an in-memory store goes when the last container holding it closes",
                             hint: "close the containers that hold it", store: url.description)
        }
    }
}
