import Foundation
import Logging

/// Migrates a SQLite store file so that it is never left half-migrated.
///
/// One migrator at a time holds the ``SQLiteMigrationLock`` beside the store, and other
/// writers are held off by the ``SQLiteWriterFence`` (the store's write lock) from the first
/// step until the migrated store is in: they wait, or are refused, and none of their writes
/// is lost.
///
/// - In-place steps only: all of them in the fence's write transaction in the store.
/// - Otherwise: the steps run on files in a ``WorkFolder`` beside the store (same file
///   system), each set-based or streamed step into a new file, each in-place step in a copy
///   of its input; the last file is copied into the store's own file in one transaction
///   (SQLite's backup API). Until then the original is only read, and stays the backup:
///   any failure deletes the work folder and leaves the store as it was.
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

    /// The lock only: the migration may hold the file to itself, and reading it would wait.
    func acquireLock(timeout: Duration, logger: Logger, orStoreAt destination: ManagedObjectModel?) async throws -> MigrationLockWait {
        .acquired(try await SQLiteMigrationLock.acquire(storeAt: path, store: store, timeout: timeout, logger: logger))
    }

    /// The lock file of a killed run, which every killed run leaves (it is removed on
    /// release only): one killed between copying the migrated store in and removing its
    /// work folder leaves both, and the next migration removes the folder. No listing of
    /// the store's folder on the way to opening a current store.
    func hasLeftoversOfKilledRuns() async -> Bool {
        SQLiteMigrationLock.isAbandoned(storeAt: path)
    }

    /// None: one process serves a SQLite store (one writer at a time is what the file
    /// allows), and it migrates the store before it serves; other writers wait meanwhile.
    var onlineRefusal: MigrationError? {
        MigrationError(
            .cannotMigrateOnline,
            "a SQLite store cannot be migrated online: online migrations are for PostgreSQL stores that several processes share",
            hint: "migrate it offline (without --online): other writers of the file wait while it runs",
            store: store.description
        )
    }

    func prepareOnlineWorkspace(for plan: MigrationPlan, keys: OnlineKeyCorrespondence, logger: Logger) async throws -> any OnlineMigrationWorkspace {
        throw onlineRefusal!
    }

    func prepareWorkspace(for plan: MigrationPlan, logger: Logger) async throws -> any MigrationWorkspace {
        if FileManager.default.fileExists(atPath: path + "-journal") {
            throw MigrationError(
                .store,
                "the store has a rollback journal (-journal) left by an interrupted write",
                hint:
                    "open the store once with the app that wrote it, or with sqlite3, so SQLite rolls the journal back; then migrate. The store was not changed",
                store: store.description
            )
        }
        let fence = try await SQLiteWriterFence.open(storeAt: path, store: store, logger: logger)
        let workspace = SQLiteMigrationWorkspace(store: store, path: path, fence: fence, logger: logger)
        // Kept until the run knows whether it continues one of them.
        workspace.abandonedFolders = WorkFolder.abandoned(besideStoreAt: path)
        if !plan.steps.allSatisfy({ $0.strategy == .inPlace }) {
            do {
                workspace.folder = try WorkFolder(besideStoreAt: path)
            } catch {
                await fence.release()
                throw error
            }
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
    /// Holds other writers off, and writes the migrated store in.
    let fence: SQLiteWriterFence
    /// Where steps write; none when every step runs in place in the store.
    var folder: WorkFolder?
    /// The work folders of killed runs, until ``removeAbandoned()``.
    var abandonedFolders: [URL] = []
    /// The store's mark when each in-place copy was made from it: the copy, once migrated
    /// in place, is what the same steps make of the store as it was then, key for key, so
    /// a later step reading it continues what a killed run left as if it read the store.
    private var copiedFrom: [String: String] = [:]
    /// The complete outputs of set-based and streamed steps this run wrote or adopted, by file: a step
    /// reading one records the output's ``FinishedOutput/mark`` as its source's.
    private var finished: [String: FinishedOutput] = [:]

    init(store: StoreURL, path: String, fence: SQLiteWriterFence, logger: Logger) {
        self.store = store
        self.path = path
        self.fence = fence
        self.logger = logger
    }

    func holdWriters() async throws {
        try await fence.hold()
    }

    func writeStore(_ body: @escaping @Sendable (any DatabaseConnection) throws -> Void) async throws {
        try await fence.commit(body)
    }

    var storeAfterFailure: String { "the store was not changed" }

    /// Indexes built after the bulk writes: one sorted pass each, cheaper than keeping them
    /// up row by row (measured by the benchmark: a 2 M-row entity mapping about a fifth faster).
    var outputOptions: PersistentStore.Options { .workspace }

    /// The file of `url`: the store's own (symbolic links resolved), or a work file.
    private func file(_ url: StoreURL) throws(MigrationError) -> String {
        guard let file = (url.engine as? SQLiteEngine)?.path else {
            throw MigrationError(.store, "\(url) is not a SQLite file: a SQLite migration reads and writes files only", store: store.description)
        }
        return file == (store.engine as? SQLiteEngine)?.path ? path : file
    }

    private func workFile(forStep index: Int) -> String {
        guard let folder else { preconditionFailure("steps that write files have a work folder") }
        return folder.url.appendingPathComponent("step\(index + 1).sqlite").path
    }

    func inPlaceTarget(from current: StoreURL, firstStep: Int) async throws -> (url: StoreURL, isStore: Bool) {
        let currentFile = try file(current)
        guard currentFile == path else {
            // Changed where it is from now on: no longer the output its record describes.
            try forgetFinished(currentFile)
            return (current, false)
        }
        // Only when every step runs in place is the store changed where it is.
        guard folder != nil else { return (current, true) }
        let copy = workFile(forStep: firstStep)
        try await fence.copyStore(to: copy)
        // Taken with the writers still held off: the store as copied (the copy may have
        // written its WAL back into the file first).
        copiedFrom[copy] = storeMark
        return (.sqlite(copy), false)
    }

    func newOutput(forStep index: Int) -> StoreURL {
        .sqlite(workFile(forStep: index))
    }

    func swapIn(_ output: StoreURL, replacing current: StoreURL, swapping: @escaping @Sendable () throws -> Void) async throws -> StoreURL {
        let replaced = try file(current)
        if replaced != path { removeFiles(of: replaced) }
        return output
    }

    func discard(_ output: StoreURL) async {
        if let output = try? file(output) { removeFiles(of: output) }
    }

    func finish(
        with current: StoreURL,
        lockLetGo: @escaping @Sendable () throws -> Void,
        swapping: @escaping @Sendable () throws -> Void
    ) async throws {
        let migrated = try file(current)
        guard migrated != path else { return }
        // The copy reads the finished file alone: its own WAL written back, nothing left beside it.
        try await checkpoint(migrated)
        try await fence.replaceStore(with: migrated, lockLetGo: lockLetGo, swapping: swapping)
    }

    func cleanUp() async {
        await fence.release()
        folder?.remove()
        await removeAbandoned()
    }

    /// The store file's identity, size and modification time, and its WAL's: a commit by any
    /// process changes one of them (SQLite's own change counter is not kept in WAL mode).
    func sourceMark(of current: StoreURL) async throws -> String? {
        let file = try file(current)
        return file == path ? storeMark : copiedFrom[file] ?? finished[file]?.mark
    }

    /// The store's part of `mark`: a finished output's mark adds the steps that wrote it.
    func storeUnchanged(since mark: String) async throws -> Bool {
        storeMark == FinishedOutput.storePart(of: mark)
    }

    /// In a file beside the output, `step3.sqlite.finished`, written once the output is
    /// whole on disk. A kill before it leaves an output that is not taken; one after it,
    /// an output the next run takes as it is.
    func recordFinished(_ output: StoreURL, fingerprint: String, sourceMark: String) async throws {
        let file = try file(output)
        let record = FinishedOutput(output: output, fingerprint: fingerprint, sourceMark: sourceMark, identity: UUID().uuidString)
        let saved = FinishedRecord(fingerprint: record.fingerprint, sourceMark: record.sourceMark, identity: record.identity)
        try JSONEncoder().encode(saved).write(to: URL(fileURLWithPath: file + Self.finishedSuffix), options: .atomic)
        finished[file] = record
    }

    var recordsFinishedOutputs: Bool { true }

    var finishedOutputs: [FinishedOutput] {
        abandonedOutputs.compactMap { output in
            guard let file = try? file(output) else { return nil }
            return Self.finishedRecord(of: file).map {
                FinishedOutput(output: output, fingerprint: $0.fingerprint, sourceMark: $0.sourceMark, identity: $0.identity)
            }
        }
    }

    /// What `step3.sqlite.finished` says of `step3.sqlite`.
    private struct FinishedRecord: Codable {
        var fingerprint: String
        var sourceMark: String
        var identity: String
    }

    private static let finishedSuffix = ".finished"

    private static func finishedRecord(of file: String) -> FinishedRecord? {
        guard let data = FileManager.default.contents(atPath: file + finishedSuffix) else { return nil }
        return try? JSONDecoder().decode(FinishedRecord.self, from: data)
    }

    /// Before `file` is changed or removed: a record left would describe another file.
    private func forgetFinished(_ file: String) throws {
        finished[file] = nil
        let record = file + Self.finishedSuffix
        guard FileManager.default.fileExists(atPath: record) else { return }
        try FileManager.default.removeItem(atPath: record)
    }

    /// An empty WAL, or none, holds no commit: SQLite makes, empties and removes it as
    /// connections come and go. A commit lands in a WAL that then holds frames (a new
    /// time), and is written back into the file (a new time) before the WAL is emptied.
    ///
    /// The machine's boot goes with it: a step's output is written without syncs, whole
    /// after a killed process but not after a crash of the machine, so a run after a restart
    /// starts the step again.
    private var storeMark: String {
        let wal = Self.fileMark(path + "-wal")
        return Self.fileMark(path).mark + " " + (wal.size > 0 ? wal.mark : "empty") + " boot:" + Self.bootID
    }

    /// The machine's boot id; where it cannot be read, one of this process's own, so that
    /// no other run's output is ever taken for written since the last boot.
    private static let bootID =
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "process-\(UUID().uuidString)"

    private static func fileMark(_ path: String) -> (mark: String, size: Int64) {
        var info = stat()
        guard stat(path, &info) == 0 else { return ("none", 0) }
        return ("\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)", Int64(info.st_size))
    }

    var abandonedOutputs: [StoreURL] {
        abandonedFolders.flatMap { folder -> [StoreURL] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.filter { $0.hasSuffix(".sqlite") }.sorted().map { .sqlite(folder.appendingPathComponent($0).path) }
        }
    }

    /// Moved into this run's folder. Its commits were atomic (a rollback journal) and the
    /// machine has not restarted since (the store's mark says), so it holds whole batches:
    /// no check reads it.
    func adopt(_ output: StoreURL, forStep index: Int) async throws -> StoreURL {
        let from = try file(output)
        let to = workFile(forStep: index)
        // A journal goes with its file: one a kill left hot was rolled back when the
        // checkpoint was read, but the file is moved whole all the same.
        for suffix in ["", "-wal", "-journal", Self.finishedSuffix] where FileManager.default.fileExists(atPath: from + suffix) {
            try FileManager.default.moveItem(atPath: from + suffix, toPath: to + suffix)
        }
        try? FileManager.default.removeItem(atPath: from + "-shm")
        if let record = Self.finishedRecord(of: to) {
            finished[to] = FinishedOutput(
                output: .sqlite(to),
                fingerprint: record.fingerprint,
                sourceMark: record.sourceMark,
                identity: record.identity
            )
        }
        return .sqlite(to)
    }

    func removeAbandoned() async {
        for folder in abandonedFolders { WorkFolder.remove(abandoned: folder, storePath: path, logger: logger) }
        abandonedFolders = []
    }

    func abandon() async {
        await fence.release()
        folder?.abandon()
    }

    func withDatabase<T: Sendable>(_ url: StoreURL, isDurable: Bool, _ body: (any Database) async throws -> T) async throws -> T {
        let file = try file(url)
        let isStore = file == path
        let database = try await SQLiteDatabase.open(path: file, mode: .readWrite, readerCount: 0, isDurable: isDurable)
        do {
            let result = try await body(database)
            do {
                try await database.checkpoint()
            } catch  where isStore {
                // Committed in the store: the migration has happened, and SQLite writes the WAL back on the next open.
                logger.warning(
                    "the migrated store's WAL was not written back yet; SQLite does it on the next open",
                    metadata: [LoggingKeys.store: "\(store)"]
                )
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

    private func removeFiles(of file: String) {
        guard file != path else { return }
        // Its record first: the file may not go, a record alone is not taken.
        try? forgetFinished(file)
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: file + suffix) }
    }
}
