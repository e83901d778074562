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
        switch url.kind {
        case .sqlite(let path):
            try SQLiteStoreFile.checkIsRegularFile(path, store: url)
            let connection = try SQLiteConnection(readingStoreAt: path)
            return try body(connection)
        case .postgres(let configuration):
            let database = try await PostgresDatabase.open(configuration, readerCount: 0, readOnly: true)
            do {
                let result = try await database.read(body)
                await database.close()
                return result
            } catch {
                await database.close()
                throw error
            }
        case .memory:
            throw StoreError(.unsupported, "an in-memory store cannot be inspected from outside its process",
                             hint: "inspect it through the PersistentStore that holds it", store: url.description)
        }
    }
}
