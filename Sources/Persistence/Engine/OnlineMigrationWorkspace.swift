import Logging

/// What an online migration needs from the engine a store lives in: a record of every
/// change other processes make, a copy of the store as one snapshot, catch-up rounds that
/// migrate the changed rows again into the migrated copy, and a cut-over that replaces the
/// store by it while writers are held off for a moment. ``OnlineMigrationRun`` runs the
/// phases, for every engine, through it; only PostgreSQL has one
/// (``PostgresOnlineWorkspace``): a SQLite store is served by the one process that migrates
/// it, which holds its writers off instead (``MigrationBackend/prepareOnlineWorkspace(for:keys:logger:)``
/// refuses).
///
/// The runner calls, in order: ``installCapture()``, ``copyStore(throttle:)``, then (after migrating
/// the copy) ``readyToServe(_:)``, ``catchUp(into:limit:migrate:)`` in rounds, ``cutOver(to:lockTimeout:finalCatchUp:swapping:)``
/// until it succeeds, and ``cleanUp()`` whatever happened (``abandon()`` for a killed run).
protocol OnlineMigrationWorkspace: AnyObject {
    /// Removes what killed online runs left beside the store, then records every insert,
    /// update and delete of the store's tables from here on.
    func installCapture() async throws

    /// Copies the store beside it, every table from one snapshot taken after the capture was
    /// installed; returns the copy, a store at the store's version. `throttle` paces the
    /// copy (in chunks of keys) when set.
    func copyStore(throttle: MigrationThrottle?) async throws -> StoreURL

    /// Readies the migrated copy to serve as the store, once migrated and before the
    /// catch-up rounds: the engine's statistics of its tables, the store's owners and grants.
    func readyToServe(_ migrated: StoreURL) async throws

    /// Changes recorded and not migrated yet.
    func pendingChanges() async throws -> Int

    /// One catch-up round: takes up to `limit` recorded changes, copies the rows they name
    /// (and the rows those reach, which their migration reads) into a new store at the
    /// store's version, has `migrate` migrate it to the target version, and puts what it
    /// made of the changed rows in place of what `migrated` held for them, in the
    /// transaction that takes the changes: a failed round leaves them recorded. Returns how
    /// many changes it took.
    func catchUp(into migrated: StoreURL, limit: Int, migrate: (StoreURL) async throws -> Void) async throws -> Int

    /// Holds the store's writers off, waiting at most `lockTimeout` for the writes in flight
    /// (returns `false`, nothing changed, when they are still in the way), runs
    /// `finalCatchUp`, then replaces the store by `migrated` in the transaction that holds
    /// the writers, calling `swapping` inside it, and `committed` once it has committed,
    /// before the old tables and the capture are removed.
    func cutOver(
        to migrated: StoreURL,
        lockTimeout: Duration,
        finalCatchUp: () async throws -> Void,
        swapping: @escaping @Sendable () throws -> Void,
        committed: () throws -> Void
    ) async throws -> Bool

    /// Removes the capture, the copy and the round stores that are left.
    func cleanUp() async

    /// Leaves everything as a killed process would, for the next run to remove.
    func abandon() async
}
