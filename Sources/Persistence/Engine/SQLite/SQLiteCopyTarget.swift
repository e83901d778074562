import Foundation

/// A SQLite file that receives a copied store: written into a new file beside it, then
/// moved into place — linked when there was none (so a store created meanwhile is never
/// overwritten), renamed over it with `replace`.
struct SQLiteCopyTarget: StoreCopyTarget {
    let path: String
    let url: StoreURL
    let replace: Bool

    func fill(
        model: ManagedObjectModel,
        layout: StoreLayout,
        metadata: StoreMetadata,
        rows: (any Database) async throws -> [String: Int]
    ) async throws -> StoreCopy.Summary {
        if FileManager.default.fileExists(atPath: path), !replace {
            throw StoreError(
                .alreadyExists,
                "there is already a store at \(path)",
                hint: "pass --replace to replace it, or name another destination",
                store: url.description
            )
        }
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).copying-\(UUID().uuidString)").path
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: temporary + suffix) } }
        let database = try await SQLiteDatabase.open(path: temporary, mode: .readWriteCreate, readerCount: 0)
        let counts: [String: Int]
        do {
            // One transaction: the rows are read from the source between statements, so the
            // transaction is opened and closed by hand on the writer.
            try await database.writeWithoutTransaction { connection in
                try connection.execute("BEGIN IMMEDIATE")
                for statement in StoreSchema(model: model, dialect: .sqlite, layout: layout).createStatements() {
                    try connection.execute(statement)
                }
            }
            counts = try await rows(database)
            try await database.writeWithoutTransaction { connection in
                try StoreCreation.writeMetadata(metadata, on: connection)
                try connection.execute("COMMIT")
            }
            try await database.checkpoint()
            await database.close()
        } catch {
            await database.close()
            throw error
        }
        if replace {
            try SQLiteStoreFile.replace(path, with: temporary, store: url)
            return StoreCopy.Summary(modelVersion: model.name, rows: counts)
        }
        guard link(temporary, path) == 0 else {
            let reason = errno == EEXIST ? "another process created a store there first" : String(cString: strerror(errno))
            throw StoreError(
                .alreadyExists,
                "cannot move the copied store into place at \(path): \(reason)",
                hint: "name another destination, or pass --replace",
                store: url.description
            )
        }
        return StoreCopy.Summary(modelVersion: model.name, rows: counts)
    }
}
