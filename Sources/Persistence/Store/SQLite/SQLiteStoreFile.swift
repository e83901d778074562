import CSQLite
import Foundation

/// File-level operations on SQLite stores: reading metadata read-only, creating atomically.
enum SQLiteStoreFile {
    /// Reads `Z_METADATA` through a read-only connection; the file is never changed.
    static func readMetadata(path: String, store: StoreURL) throws -> StoreMetadata {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.storeNotFound, "there is no store at \(path)", hint: "check the path, or create the store (e.g. `bookstore seed`)", store: store.description)
        }
        do {
            let connection = try SQLiteConnection(readingStoreAt: path)
            guard let metadata = try StoreMetadata.read(from: connection) else {
                throw StoreError(.notAStore, "\(path) is a SQLite database but not a store: it has no Z_METADATA table", hint: "point --store at a store file, or create one", store: store.description)
            }
            return metadata
        } catch var error as StoreError where error.store == nil {
            // Damaged metadata: say which store, as the PostgreSQL store does.
            error.store = store.description
            throw error
        } catch let error as DatabaseError where error.resultCode & 0xff == SQLITE_NOTADB {
            throw StoreError(.notAStore, "\(path) is not a SQLite database", hint: "point --store at a store file; this file was left as it was", store: store.description)
        } catch let error as DatabaseError {
            throw StoreError(.database, "cannot read the store at \(path)", hint: "check the file's permissions and that it is not damaged", store: store.description, underlying: error)
        }
    }

    /// Reads the store's tables (``StoreStructure``) through a read-only connection.
    static func readStructure(path: String, store: StoreURL) throws -> StoreStructure {
        do {
            let connection = try SQLiteConnection(readingStoreAt: path)
            return try StoreStructure.read(from: connection)
        } catch let error as DatabaseError {
            throw StoreError(.database, "cannot read the tables of the store at \(path)", hint: "check the file's permissions and that it is not damaged", store: store.description, underlying: error)
        }
    }

    /// Creates the store in a temporary file beside `path`, then links it into place,
    /// so a crash never leaves a half-created store under the real name.
    static func create(path: String, model: ManagedObjectModel, metadata: StoreMetadata, includingIndexes: Bool = true) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).creating-\(UUID().uuidString)").path
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: temporary + suffix)
            }
        }
        do {
            let connection = try SQLiteConnection(path: temporary, mode: .readWriteCreate)
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            try connection.transaction {
                try StoreCreation.create(model: model, metadata: metadata, on: connection, includingIndexes: includingIndexes)
            }
            // Fold the WAL into the file so the rename moves the whole store.
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        } catch let error as DatabaseError {
            throw StoreError(.database, "cannot create a store at \(path)", hint: "check that the folder exists and is writable", store: "sqlite://\(path)", underlying: error)
        }
        // link(2) fails if the name exists, unlike rename(2): a store another process
        // created meanwhile is never replaced by this empty one.
        guard link(temporary, path) == 0 else {
            let reason = errno == EEXIST ? "another process created a store there first" : String(cString: strerror(errno))
            throw StoreError(.alreadyExists, "cannot move the new store into place at \(path): \(reason)", hint: "open the existing store instead", store: "sqlite://\(path)")
        }
    }
}
