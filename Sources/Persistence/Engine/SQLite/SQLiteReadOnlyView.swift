import Foundation

/// Where a read-only look at a SQLite store reads it from, so that looking writes no row and
/// leaves nothing beside the store.
///
/// A read-only connection to a store in WAL mode needs the `-shm` shared-memory file, and
/// creates it when it is missing. So:
/// - without a `-wal` file every committed page is in the main file, and it is read as
///   immutable: no locks, no files;
/// - with `-wal` and `-shm` a process has the store open (or had it until it crashed), and
///   the store is read in place, sharing the log as SQLite's readers do. Inside
///   ``PersistentStore/leavingFilesUntouched(_:)`` (an inspection, which must write nothing)
///   the log and shared memory are only read (`mode=ro&readonly_shm=1`), and all three files
///   stay byte for byte as they were. Otherwise the connection is
///   opened for writing (where the file can be written) but writes nothing (`PRAGMA
///   query_only`): SQLite writes the log back into the file and removes `-wal` and `-shm`
///   only when the last connection to close can write, and the look may be the last (a
///   migration's version check while the migrating process lets the store go). A read-only
///   look would leave the log beside the store, holding commits the file alone lacks;
/// - with a `-wal` but no `-shm` (a store an app left without closing, handed over as its
///   two files), committed rows are still only in the log and no process has it open: the
///   store and its log are read from a private copy in the temporary folder (the main file
///   hard-linked where it can be), removed when the last connection reading it closes.
///
/// ```swift
/// let view = try SQLiteReadOnlyView(storeAt: path)
/// let connection = try SQLiteConnection(reading: view)
/// ```
final class SQLiteReadOnlyView: Sendable {
    /// What to open: a path or a `file:` URI.
    let uri: String
    /// Whether the store is read in place, sharing its log with the processes that have it
    /// open; the connection must then be able to write the log back if it closes last.
    let sharesTheLog: Bool
    /// The private folder holding the copy, when there is one.
    private let privateFolder: String?

    /// Whether looks taken in this task leave the store's files exactly as they were.
    @TaskLocal static var leavesFilesUntouched = false

    init(storeAt path: String, leavingFilesUntouched: Bool = SQLiteReadOnlyView.leavesFilesUntouched) throws(DatabaseError) {
        let files = FileManager.default
        switch (files.fileExists(atPath: path + "-wal"), files.fileExists(atPath: path + "-shm")) {
        case (false, _):
            uri = Self.immutableURI(for: path)
            privateFolder = nil
            sharesTheLog = false
        case (true, true) where leavingFilesUntouched:
            // The log and its index are read where they are, never written: SQLite keeps the
            // index in private memory when it cannot write the shared one.
            uri = "\(Self.fileURI(for: path))?mode=ro&readonly_shm=1"
            privateFolder = nil
            sharesTheLog = false
        case (true, true):
            uri = path
            privateFolder = nil
            sharesTheLog = true
        case (true, false):
            let folder = files.temporaryDirectory.appendingPathComponent("persistence-read-\(UUID().uuidString)").path
            let copy = folder + "/" + URL(fileURLWithPath: path).lastPathComponent
            do {
                try files.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
                // The main file is only read: a hard link spares copying it where the folders share a file system.
                if link(path, copy) != 0 { try files.copyItem(atPath: path, toPath: copy) }
                try files.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            } catch  where !files.fileExists(atPath: path + "-wal") {
                // The last connection closed meanwhile and wrote its log back (it removes the
                // `-shm` file, then the `-wal`): every committed page is in the main file now.
                try? files.removeItem(atPath: folder)
                uri = Self.immutableURI(for: path)
                privateFolder = nil
                sharesTheLog = false
                return
            } catch {
                try? files.removeItem(atPath: folder)
                throw DatabaseError(
                    resultCode: 14,  // SQLITE_CANTOPEN
                    message:
                        "cannot read the store with its write-ahead log without writing beside it: making a private copy in the temporary folder failed (\((error as NSError).localizedDescription))"
                )
            }
            uri = copy
            privateFolder = folder
            sharesTheLog = false
        }
    }

    /// The store read as immutable: no locks, no files created, any `-wal` file ignored.
    static func immutableURI(for path: String) -> String {
        "\(fileURI(for: path))?immutable=1"
    }

    /// The store read in place, read-only: a transaction that writes other databases of the
    /// same connection (`BEGIN IMMEDIATE` with it attached) only reads this one, so it never
    /// waits for the store's write lock, which another connection may hold.
    static func readOnlyURI(for path: String) -> String {
        "\(fileURI(for: path))?mode=ro"
    }

    private static func fileURI(for path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:\(path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path)"
    }

    deinit {
        if let privateFolder { try? FileManager.default.removeItem(atPath: privateFolder) }
    }
}
