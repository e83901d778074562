import Foundation
import Logging

/// Migrates a SQLite store file so that it is never left half-migrated.
///
/// One migrator at a time holds the ``SQLiteMigrationLock`` beside the store. The store's
/// own WAL is first written back into the file (committed data only moves, nothing
/// changes), and a store that another process is using is refused.
///
/// - In-place steps only: all of them in one write transaction in the store.
/// - Otherwise: the steps run on files in a ``WorkFolder`` beside the store (same file
///   system), each set-based or streamed step into a new file, each in-place step in its
///   input; the last file gets the store's permissions and owner, is synced and renamed
///   over the store in one atomic step. Until then the original is only read, and stays
///   the backup: any failure deletes the work folder and leaves the store as it was.
///
/// A symbolic link stays in place: the file it leads to is what gets migrated.
struct SQLiteMigrationBackend: MigrationBackend {
    let store: StoreURL
    /// The store's file, symbolic links resolved.
    let path: String

    init(store: StoreURL, path: String) {
        self.store = store
        self.path = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    func acquireLock(timeout: Duration, logger: Logger) async throws -> any MigrationLock {
        try await SQLiteMigrationLock.acquire(storeAt: path, store: store, timeout: timeout, logger: logger)
    }

    func prepareWorkspace(for plan: MigrationPlan, logger: Logger) async throws -> any MigrationWorkspace {
        if FileManager.default.fileExists(atPath: path + "-journal") {
            throw MigrationError(
                .store, "the store has a rollback journal (-journal) left by an interrupted write",
                hint: "open the store once with the app that wrote it, or with sqlite3, so SQLite rolls the journal back; then migrate. The store was not changed",
                store: store.description)
        }
        let workspace = SQLiteMigrationWorkspace(store: store, path: path, logger: logger)
        do {
            try await workspace.checkpoint(path)
        } catch let error as DatabaseError where [5, 6].contains(error.resultCode & 0xff) {
            // SQLITE_BUSY, SQLITE_LOCKED; other failures say what they are.
            throw MigrationError(.store, "the store is in use by another process", hint: "stop the processes that use it (such as the service) and migrate again; the store was not changed",
                                 store: store.description, underlying: error)
        }
        if !plan.steps.allSatisfy({ $0.strategy == .inPlace }) {
            WorkFolder.removeAbandoned(besideStoreAt: path, logger: logger)
            workspace.folder = try WorkFolder(besideStoreAt: path)
        }
        return workspace
    }
}

/// The files of one SQLite migration: the store, and a work folder when any step writes
/// a new file.
final class SQLiteMigrationWorkspace: MigrationWorkspace {
    let store: StoreURL
    let path: String
    let logger: Logger
    /// Where steps write; none when every step runs in place in the store.
    var folder: WorkFolder?

    init(store: StoreURL, path: String, logger: Logger) {
        self.store = store
        self.path = path
        self.logger = logger
    }

    var storeAfterFailure: String { "the store was not changed" }

    /// Indexes built after the bulk writes: one sorted pass each, cheaper than keeping them
    /// up row by row (measured by the benchmark: a 2 M-row entity mapping about a fifth faster).
    var outputOptions: PersistentStore.Options { .workspace }

    private func file(_ url: StoreURL) -> String {
        guard case .sqlite(let file) = url.kind else { preconditionFailure("a SQLite migration writes SQLite files") }
        return file == store.sqlitePath ? path : file
    }

    private func workFile(forStep index: Int) -> String {
        guard let folder else { preconditionFailure("steps that write files have a work folder") }
        return folder.url.appendingPathComponent("step\(index + 1).sqlite").path
    }

    func inPlaceTarget(from current: StoreURL, firstStep: Int) async throws -> (url: StoreURL, isStore: Bool) {
        guard file(current) == path else { return (current, false) }
        // Only when every step runs in place is the store changed where it is.
        guard folder != nil else { return (current, true) }
        let copy = workFile(forStep: firstStep)
        let source = path
        try await FileSystem.run { try FileSystem.copy(source, to: copy) }
        return (.sqlite(copy), false)
    }

    func newOutput(forStep index: Int) -> StoreURL {
        .sqlite(workFile(forStep: index))
    }

    func swapIn(_ output: StoreURL, replacing current: StoreURL, swapping: @escaping @Sendable () throws -> Void) async throws -> StoreURL {
        if file(current) != path { removeFiles(of: file(current)) }
        return output
    }

    func discard(_ output: StoreURL) async {
        removeFiles(of: file(output))
    }

    func finish(with current: StoreURL, swapping: @escaping @Sendable () throws -> Void) async throws {
        guard file(current) != path else { return }
        try await replaceStore(with: file(current), swapping: swapping)
    }

    func cleanUp() async {
        folder?.remove()
    }

    func abandon() {
        folder?.abandon()
    }

    func withDatabase<T: Sendable>(_ url: StoreURL, isDurable: Bool, _ body: (any Database) async throws -> T) async throws -> T {
        let isStore = file(url) == path
        let database = try await SQLiteDatabase.open(path: file(url), mode: .readWrite, readerCount: 0, isDurable: isDurable)
        do {
            let result = try await body(database)
            do {
                try await database.checkpoint()
            } catch where isStore {
                // Committed in the store: the migration has happened, and SQLite writes the WAL back on the next open.
                logger.warning("the migrated store's WAL was not written back yet; SQLite does it on the next open", metadata: [LoggingKeys.store: "\(store)"])
            }
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    /// Writes the WAL into the file, so copies and renames carry every committed row.
    /// Without a WAL file every committed page is in the main file already, and the file is
    /// not opened at all (opening it for writing could change its header).
    func checkpoint(_ file: String) async throws {
        guard FileManager.default.fileExists(atPath: file + "-wal") else { return }
        let database = try await SQLiteDatabase.open(path: file, mode: .readWrite, readerCount: 0)
        do {
            try await database.checkpoint()
            await database.close()
        } catch {
            await database.close()
            throw error
        }
    }

    /// Renames the finished file over the store: one atomic step on the same file system.
    private func replaceStore(with file: String, swapping: @escaping @Sendable () throws -> Void) async throws {
        let store = path
        let storeURL = self.store
        try await FileSystem.run {
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
                // A WAL left beside the result would belong to no file after the rename.
                let size = (try? FileManager.default.attributesOfItem(atPath: file + suffix)[.size] as? Int) ?? 0
                if suffix == "-wal", size > 0 {
                    throw MigrationError(.store, "the migrated store still has unwritten changes in its WAL", hint: "the store was not changed; run the migration again", store: storeURL.description)
                }
                try? FileManager.default.removeItem(atPath: file + suffix)
            }
            // The store's WAL was written back before the migration; one with content now
            // means someone wrote to the store meanwhile, and the rename would lose that.
            let wal = (try? FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int) ?? 0
            if wal > 0 {
                throw MigrationError(.store, "the store was written to while it was being migrated",
                                     hint: "stop the processes that use the store and migrate again; the store was not changed", store: storeURL.description)
            }
            FileSystem.copyOwnership(from: store, to: file)
            try FileSystem.sync(file)
            try swapping()
            // Stale shared-memory or empty WAL files must not be applied to the new file.
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
            try FileSystem.rename(file, to: store)
        }
        // The rename happened: from here on a failure is only a warning.
        do {
            let folder = URL(fileURLWithPath: store).deletingLastPathComponent().path
            try await FileSystem.run { try FileSystem.sync(folder) }
        } catch {
            logger.warning("the store's folder could not be synced after the migrated store replaced the original", metadata: [LoggingKeys.store: "\(storeURL)"])
        }
    }

    private func removeFiles(of file: String) {
        guard file != path else { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
    }
}

extension StoreURL {
    /// The file of a SQLite store, as its URL names it.
    fileprivate var sqlitePath: String? {
        if case .sqlite(let path) = kind { return path }
        return nil
    }
}
