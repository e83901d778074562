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
        try await url.engine.destroy(logger: logger)
    }
}
