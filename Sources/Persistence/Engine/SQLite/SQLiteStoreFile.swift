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
        throw StoreError(
            .notAStore,
            "\(path) is \(what), not a store file",
            hint: "point the store URL at a SQLite store file, or at a path where one may be created; nothing was opened or changed",
            store: store.description
        )
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

    /// Reads `Z_METADATA` through a connection that only reads: no row changes (closing it
    /// last writes a store's log back into the file, as any connection's close does).
    static func readMetadata(path: String, store: StoreURL) throws -> StoreMetadata {
        try checkIsRegularFile(path, store: store)
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(
                .storeNotFound,
                "there is no store at \(path)",
                hint: "check the path, or create the store with the app that uses it",
                store: store.description
            )
        }
        do {
            let connection = try SQLiteConnection(readingStoreAt: path)
            guard let metadata = try StoreMetadata.read(from: connection) else {
                throw StoreError(
                    .notAStore,
                    "\(path) is a SQLite database but not a store: it has no Z_METADATA table",
                    hint: "point --store at a store file, or create one",
                    store: store.description
                )
            }
            return metadata
        } catch var error as StoreError where error.store == nil {
            // Damaged metadata: say which store, as the PostgreSQL store does.
            error.store = store.description
            throw error
        } catch let error as DatabaseError where error.resultCode & 0xff == SQLITE_NOTADB {
            throw StoreError(
                .notAStore,
                "\(path) is not a SQLite database",
                hint: "point --store at a store file; this file was left as it was",
                store: store.description
            )
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
            return StoreError(
                .database,
                what,
                hint: "check the file's permissions and that it is not damaged",
                store: store.description,
                underlying: error
            )
        }
        return StoreError(.database, "\(fault): \(what)", hint: fault.advice, store: store.description, underlying: error)
    }

    /// Removes the store at `path` with its `-wal`, `-shm` and `-journal` files, once no
    /// other connection has it open, and holding every other connection off meanwhile.
    ///
    /// A connection that had the store open would write on into the removed files, where no
    /// path leads any more: its writes would be acknowledged and lost. So the store is
    /// switched out of WAL mode first, which SQLite allows only to its sole connection, and
    /// the files are removed inside an exclusive transaction.
    ///
    /// - Throws: ``StoreError/Code/storeInUse`` when another connection has the store open,
    ///   ``StoreError/Code/notWritable`` when a file cannot be removed.
    static func remove(_ path: String, store: StoreURL) throws {
        try checkIsRegularFile(path, store: store)
        let holder = try holdAlone(path, store: store, doing: "remove")
        defer { holder?.close() }
        // The log and journal before the store file: a process that dies in between leaves
        // at worst the old store without its log, which the next removal takes; never a
        // `-wal` alone, whose pages a new store at the same path would take in as its own.
        for suffix in ["-wal", "-shm", "-journal", ""] where FileManager.default.fileExists(atPath: path + suffix) {
            do {
                try FileManager.default.removeItem(atPath: path + suffix)
            } catch {
                throw StoreError(
                    .notWritable,
                    "cannot remove \(path + suffix): \((error as NSError).localizedDescription)",
                    hint: "check that the store's folder is writable for this user",
                    store: store.description
                )
            }
        }
    }

    /// Renames the finished store at `file` over the store at `path`, once no other
    /// connection has the old one open, holding every other connection off meanwhile: one
    /// would go on writing into the replaced file, and its close could remove the new
    /// store's log by name. The old store's log goes first, so the new file never takes in
    /// pages that are not its own.
    ///
    /// - Throws: ``StoreError/Code/storeInUse`` when another connection has the store open,
    ///   ``StoreError/Code/notWritable`` when the rename fails.
    static func replace(_ path: String, with file: String, store: StoreURL) throws {
        try checkIsRegularFile(path, store: store)
        let holder = try holdAlone(path, store: store, doing: "replace")
        defer { holder?.close() }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        guard rename(file, path) == 0 else {
            throw StoreError(
                .notWritable,
                "cannot move the copied store into place at \(path): \(String(cString: strerror(errno)))",
                hint: "check that the store's folder is writable for this user; the store was left as it was",
                store: store.description
            )
        }
    }

    /// Takes the store at `path` for this connection alone (out of WAL mode, which SQLite
    /// allows only to its sole connection, then an exclusive transaction), so that its
    /// files can be removed or replaced; returns the connection holding it, `nil` when
    /// there is no store.
    private static func holdAlone(_ path: String, store: StoreURL, doing verb: String) throws -> SQLiteConnection? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("PRAGMA busy_timeout = 0")
            let mode = try connection.scalar("PRAGMA journal_mode = DELETE")?.text
            guard mode?.lowercased() == "delete" else {
                throw DatabaseError(resultCode: SQLITE_BUSY, message: "still in \(mode ?? "an unknown") journal mode")
            }
            try connection.execute("BEGIN EXCLUSIVE")
            // A connection opened between the switch and the lock would have switched
            // the store back to WAL, where an exclusive lock does not keep it out.
            let held = try connection.scalar("PRAGMA journal_mode")?.text
            guard held?.lowercased() == "delete" else {
                throw DatabaseError(resultCode: SQLITE_BUSY, message: "switched back to \(held ?? "another") journal mode")
            }
            return connection
        } catch let error as DatabaseError where [SQLITE_BUSY, SQLITE_LOCKED].contains(error.resultCode & 0xff) {
            throw StoreError(
                .storeInUse,
                "the store at \(path) is open in another connection or process, whose writes would go on into the \(verb)d file and be lost",
                hint: "stop what has it open (a running service, a migration, another command), then try again; nothing was \(verb)d",
                store: store.description,
                underlying: error
            )
        } catch let error as DatabaseError where error.resultCode & 0xff == SQLITE_NOTADB {
            throw StoreError(
                .notAStore,
                "\(path) is not a SQLite database, so not a store",
                hint: "name a store's file; this file was left as it was",
                store: store.description,
                underlying: error
            )
        } catch let error as DatabaseError {
            throw unreadable("cannot open the store at \(path) to \(verb) it", error, store: store)
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
            throw StoreError(
                .database,
                "cannot create a store at \(path)",
                hint: "check that the folder exists and is writable",
                store: "sqlite://\(path)",
                underlying: error
            )
        }
        // link(2) fails if the name exists, unlike rename(2): a store another process
        // created meanwhile is never replaced by this empty one.
        guard link(temporary, path) == 0 else {
            let reason = errno == EEXIST ? "another process created a store there first" : String(cString: strerror(errno))
            throw StoreError(
                .alreadyExists,
                "cannot move the new store into place at \(path): \(reason)",
                hint: "open the existing store instead",
                store: "sqlite://\(path)"
            )
        }
    }
}
