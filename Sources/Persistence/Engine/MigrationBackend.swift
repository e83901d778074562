import Logging

/// What a migration needs from the engine a store lives in. ``MigrationRun`` runs a plan's
/// steps once, for every engine, through it: the engine only says how one migrator at a
/// time is ensured and where steps are written (``MigrationWorkspace``).
///
/// - SQLite (``SQLiteMigrationBackend``): a lock file beside the store; steps write files in
///   a work folder, and the last one is copied into the store's file (``SQLiteWriterFence``).
/// - PostgreSQL (``PostgresMigrationBackend``): an advisory lock; steps write shadow
///   schemas, each swapped in as it completes (``PostgresWriterFence``).
protocol MigrationBackend: Sendable {
    /// The store being migrated.
    var store: StoreURL { get }

    /// Waits up to `timeout` until no other process migrates the store, then holds it; or,
    /// given a `destination`, until the store is at it, whichever comes first. The next
    /// release's replicas wait so while one of them migrates: each goes on the moment the
    /// migration's last swap (or online cut-over) commits, not when the migrating process
    /// lets go after dropping the old tables and the change capture. PostgreSQL reads the
    /// store's metadata on the waiting session each time it tries the lock; SQLite waits
    /// for the lock (the migration may hold the file to itself, and one process serves a
    /// SQLite store).
    ///
    /// - Throws: ``MigrationError/Code/storeBusy`` naming the holder when the time is up.
    func acquireLock(timeout: Duration, logger: Logger, orStoreAt destination: ManagedObjectModel?) async throws -> MigrationLockWait

    /// Whether a run killed after the store was migrated, before it cleaned up, left
    /// something beside the store that only a migration removes. Asked when the store is
    /// current (SQLite without opening it, PostgreSQL with one query): then the migrator
    /// removes it (``prepareWorkspace(for:logger:)`` with the empty plan, and the
    /// workspace's clean-up).
    func hasLeftoversOfKilledRuns() async -> Bool

    /// Checks the store can be migrated, finds what interrupted runs left, and returns
    /// where `plan`'s steps are written.
    func prepareWorkspace(for plan: MigrationPlan, logger: Logger) async throws -> any MigrationWorkspace

    /// Why the engine has no online migration, asked before the store is read; `nil` where
    /// it has one.
    var onlineRefusal: MigrationError? { get }

    /// Checks `plan` can run while other processes keep writing the store, and returns where
    /// it does (see ``OnlineMigrationWorkspace``); `keys` says which of the store's root
    /// entities each of the target's is made from.
    ///
    /// - Throws: ``MigrationError/Code/cannotMigrateOnline`` where the engine has no online
    ///   migration.
    func prepareOnlineWorkspace(for plan: MigrationPlan, keys: OnlineKeyCorrespondence, logger: Logger) async throws -> any OnlineMigrationWorkspace
}

/// What waiting for the migration lock came to.
enum MigrationLockWait: Sendable {
    /// The lock is the caller's.
    case acquired(any MigrationLock)
    /// While the caller waited, another process's migration brought the store to the
    /// destination asked for; that process still holds the lock while it cleans up.
    case storeReached
}

extension MigrationBackend {
    /// Waits up to `timeout` until no other process migrates the store, then holds it.
    func acquireLock(timeout: Duration, logger: Logger) async throws -> any MigrationLock {
        guard case .acquired(let lock) = try await acquireLock(timeout: timeout, logger: logger, orStoreAt: nil) else {
            preconditionFailure("no destination was asked for")
        }
        return lock
    }
}

/// The right to migrate one store, held until ``release()``.
protocol MigrationLock: AnyObject, Sendable {
    func release() async

    /// Lets the lock go as a killed process does (a ``MigrationAbort``): whatever marks it
    /// on disk stays, for the next run to find.
    func abandon() async
}

/// Where one run writes its steps, how a finished step becomes the store, and how other
/// writers are held off meanwhile.
///
/// The runner calls, in order: ``holdWriters()`` before each step; ``inPlaceTarget(from:firstStep:)``
/// for a group of in-place steps (then ``writeStore(_:)`` when that is the store itself),
/// or ``newOutput(forStep:)``, the step, then ``swapIn(_:replacing:)`` (or ``discard(_:)``
/// when it failed); ``finish(with:)`` after the last step; ``cleanUp()`` whatever happened.
///
/// No write another client is told succeeded may be lost: from ``holdWriters()`` until the
/// store is next changed (``writeStore(_:)``, a swap, ``finish(with:)``), other writers of
/// the store wait (or are refused), and what the step reads is final.
protocol MigrationWorkspace: AnyObject {
    /// Holds other writers of the store off until the store is next changed, once the
    /// writes in flight are committed; holding them already does nothing.
    func holdWriters() async throws

    /// Runs `body` on the store itself, in the transaction that holds writers off, and
    /// commits: in-place steps that change the store where it is.
    func writeStore(_ body: @escaping @Sendable (any DatabaseConnection) throws -> Void) async throws

    /// What a failed run leaves, for the hints of its errors.
    var storeAfterFailure: String { get }

    /// How a step's output store is opened: created if missing, one connection, commits
    /// not synced (``PersistentStore/Options/workspace``), and whether its secondary
    /// indexes wait until the bulk writes are done, which pays on one engine and not the other.
    var outputOptions: PersistentStore.Options { get }

    /// Where consecutive in-place steps run, in one transaction, when the previous step
    /// left `current`; `isStore` says it is the store itself, so a commit there is final.
    func inPlaceTarget(from current: StoreURL, firstStep: Int) async throws -> (url: StoreURL, isStore: Bool)

    /// A new, empty place for the output of step `index`.
    func newOutput(forStep index: Int) -> StoreURL

    /// A step's finished output becomes what the next step reads; returns that. Where this
    /// replaces the store itself, `swapping` is called at the moment it does.
    func swapIn(_ output: StoreURL, replacing current: StoreURL, swapping: @escaping @Sendable () throws -> Void) async throws -> StoreURL

    /// Removes what a failed step wrote.
    func discard(_ output: StoreURL) async

    /// After the last step, which left `current`: the store becomes the migrated one
    /// (calling `swapping` at the moment it does, when it is replaced now). `lockLetGo` is
    /// called where the writers' lock is let go for an instant (SQLite's copy of the
    /// migrated store, which must take it itself): another writer may commit there, and
    /// the copy is then refused (``StoreWrittenDuringReplacement``).
    func finish(
        with current: StoreURL,
        lockLetGo: @escaping @Sendable () throws -> Void,
        swapping: @escaping @Sendable () throws -> Void
    ) async throws

    /// Removes the workspace, after success or failure.
    func cleanUp() async

    /// A mark of the store as it is now, taken while writers are held off, that
    /// ``storeUnchanged(since:)`` compares with the store later. When `current` is a copy
    /// of the store migrated in place, the store's mark when it was copied: the same steps
    /// make the same copy of it again. `nil` when `current` is what an earlier step of this
    /// run wrote otherwise (a streamed step's output), which the step then cannot be
    /// continued from.
    func sourceMark(of current: StoreURL) async throws -> String?

    /// Whether nothing was written to the store since `mark` was taken, by anyone.
    func storeUnchanged(since mark: String) async throws -> Bool

    /// Records that `output`, what the step with `fingerprint` wrote from a source marked
    /// `sourceMark`, is complete (indexes, metadata), before the next step reads it. From
    /// then on ``sourceMark(of:)`` gives it a mark, so the next step can be continued
    /// after a kill, and a next run takes the output as it is (``finishedOutputs``) rather
    /// than writing it again. Nothing where each step's output becomes the store itself
    /// (PostgreSQL): the next step takes the store's own mark.
    func recordFinished(_ output: StoreURL, fingerprint: String, sourceMark: String) async throws

    /// Whether ``recordFinished(_:fingerprint:sourceMark:)`` records anything, so that a
    /// step whose output is not continued takes its source's mark for it.
    var recordsFinishedOutputs: Bool { get }

    /// The complete outputs killed runs left (``recordFinished(_:fingerprint:sourceMark:)``),
    /// with the step that wrote each and its source's mark; ``adopt(_:forStep:)`` takes one.
    var finishedOutputs: [FinishedOutput] { get }

    /// The outputs that killed runs left (``abandon()``), for this run to continue one of
    /// them; they are removed by ``removeAbandoned()``.
    var abandonedOutputs: [StoreURL] { get }

    /// Makes an abandoned output this run's output of step `index`; returns where it is now.
    func adopt(_ output: StoreURL, forStep index: Int) async throws -> StoreURL

    /// Removes what killed runs left that this run did not adopt.
    func removeAbandoned() async

    /// Leaves the workspace as a killed process would (a ``MigrationAbort``): what it wrote
    /// stays, what the kernel would release (locks, open files, sessions) is released.
    func abandon() async

    /// Runs `body` on one connection to `url` (the store or an output), closed afterwards
    /// whatever happens and with everything written back, so the files can be moved.
    /// `isDurable: false` writes without syncs where the result is thrown away on failure.
    func withDatabase<T: Sendable>(_ url: StoreURL, isDurable: Bool, _ body: (any Database) async throws -> T) async throws -> T
}

extension MigrationWorkspace {
    /// ``outputOptions`` for an output that records a step's checkpoints (`checkpointed`):
    /// each of its commits, a batch and the checkpoint that counts it, is then all or
    /// nothing whenever the process dies.
    func outputOptions(checkpointed: Bool) -> PersistentStore.Options {
        var options = outputOptions
        options.commitsAtomically = checkpointed
        return options
    }
}
