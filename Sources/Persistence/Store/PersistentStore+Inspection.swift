import Foundation

extension PersistentStore {
    /// Runs `body` on a connection of its own to the store at `url`, the way an outside
    /// tool reads it, without opening the store: SQLite read-only, writing nothing beside the
    /// store (see ``SQLiteReadOnlyView``), PostgreSQL a read-only
    /// session in one snapshot. Nothing is checked: the tables may be any model's, or none.
    ///
    /// ```swift
    /// let count = try await PersistentStore.inspect(url) { connection in
    ///     try connection.scalar("SELECT count(*) FROM ZPUBLICATION")?.int64
    /// }
    /// ```
    ///
    /// - Throws: ``DatabaseError`` when the store cannot be reached; whatever `body` throws.
    public static func inspect<T: Sendable>(_ url: StoreURL, _ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await url.engine.inspect(body)
    }
}
