import CSQLite
import Foundation

/// File-level operations on SQLite stores: reading metadata read-only, creating atomically.
enum SQLiteStoreFile {
    /// Refuses a path that leads to something other than a regular file (symbolic links
    /// followed): opening a FIFO would wait forever for a writer, and a directory, socket or
    /// device is no store either. A missing path passes: the caller says what that means.
    static func checkIsRegularFile(_ path: String, store: StoreURL) throws(StoreError) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let what: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: what = "a directory"
        case S_IFIFO: what = "a FIFO (named pipe)"
        case S_IFSOCK: what = "a socket"
        case S_IFCHR, S_IFBLK: what = "a device"
        default: what = "not a regular file"
        }
        throw StoreError(.notAStore, "\(path) is \(what), not a store file", hint: "point the store URL at a SQLite store file, or at a path where one may be created; nothing was opened or changed",
                         store: store.description)
    }

    /// Refuses a store this process could not write, before anything is opened: SQLite
    /// writes its `-wal` and `-shm` files and a migration its work folder beside the store,
    /// so the folder must be writable as well as the file.
    static func checkWritable(_ path: String, store: StoreURL) throws(StoreError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        for (target, what) in [(path, "the store file"), (folder, "the store's folder \(folder)")] {
            guard access(target, W_OK) != 0, errno != ENOENT else { continue }
            let reason = String(cString: strerror(errno))
            throw StoreError(.notWritable, "\(what) cannot be written: \(reason)", hint: StorageFault.notWritable.advice, store: store.description)
        }
    }

    /// Reads `Z_METADATA` through a read-only connection; the file is never changed.
    static func readMetadata(path: String, store: StoreURL) throws -> StoreMetadata {
        try checkIsRegularFile(path, store: store)
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
            throw unreadable("cannot read the store at \(path)", error, store: store)
        }
    }

    /// Reads the store's tables (``StoreStructure``) through a read-only connection.
    static func readStructure(path: String, store: StoreURL) throws -> StoreStructure {
        try checkIsRegularFile(path, store: store)
        do {
            let connection = try SQLiteConnection(readingStoreAt: path)
            return try StoreStructure.read(from: connection)
        } catch let error as DatabaseError {
            throw unreadable("cannot read the tables of the store at \(path)", error, store: store)
        }
    }

    /// A store that could not be read, said as the fault around it when there is one (a
    /// damaged file, a disk that fails).
    private static func unreadable(_ what: String, _ error: DatabaseError, store: StoreURL) -> StoreError {
        guard let fault = StorageFault(error) else {
            return StoreError(.database, what, hint: "check the file's permissions and that it is not damaged", store: store.description, underlying: error)
        }
        return StoreError(.database, "\(fault): \(what)", hint: fault.advice, store: store.description, underlying: error)
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
