import Foundation

extension PersistentStore {
    /// Runs `body` on a connection of its own to the store at `url`, the way an outside
    /// tool reads it, without opening the store: SQLite read-only, writing nothing beside the
    /// store (see `SQLiteReadOnlyView`), PostgreSQL a read-only
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

    /// Runs `body` so that every look it takes at a SQLite store — metadata, tables, a store
    /// opened ``Options/readOnly-type.property`` — leaves the store's files byte for byte as they were: what
    /// a command that says it only reads promises.
    ///
    /// Outside it, a read-only look at a store in use shares the store's log as SQLite's
    /// readers do and, closing after the store's last writer, writes the log back into the
    /// store file and removes `-wal` and `-shm`, as any reader's close does: nothing is lost,
    /// but the files change. Inside it, the log and its index are only read.
    ///
    /// ```swift
    /// try await PersistentStore.leavingFilesUntouched {
    ///     let metadata = try await PersistentStore.metadata(at: url)
    ///     print(metadata.storeUUID)
    /// }
    /// ```
    public static func leavingFilesUntouched<T>(_ body: () async throws -> T) async rethrows -> T {
        try await SQLiteReadOnlyView.$leavesFilesUntouched.withValue(true, operation: body)
    }
}
