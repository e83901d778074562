/// How an online migration (``ProgressiveMigrator/migrateStoreOnline(at:to:storeVersion:options:progress:)``)
/// catches up with the writes other processes make meanwhile, and how long it may stop them
/// at the cut-over.
///
/// ```swift
/// var options = OnlineMigrationOptions()
/// options.cutOverLockTimeout = .milliseconds(300)  // writers never wait longer for the lock itself
/// try await migrator.migrateStoreOnline(at: url, options: options)
/// ```
public struct OnlineMigrationOptions: Sendable {
    /// Changes one catch-up round takes at most.
    public var changesPerRound = 10_000
    /// The cut-over begins once a round leaves at most this many changes waiting: the last
    /// ones are migrated with the writers held off, so this bounds their wait.
    public var changesLeftForCutOver = 500
    /// Catch-up rounds in a row that may leave no fewer changes waiting than the fewest
    /// so far. Past them, when one round takes all that waits (at most ``changesPerRound``)
    /// and it is no more than twice the most a round took since (writers keep pace with the
    /// rounds, unevenly perhaps), the cut-over begins, its last round about as long as the
    /// recent ones; when more wait for as many rounds again (writers outpace the rounds,
    /// not a burst that settles), the migration gives up (``MigrationError/Code/storeBusy``,
    /// the store as it was) rather than hold them off for long. A backlog that shrinks,
    /// however large, is caught up.
    public var maximumRoundsWithoutProgress = 10
    /// How long the cut-over waits for the lock on the store's tables before it lets go and
    /// tries again: statements of other sessions queue behind a lock being waited for, so
    /// this bounds their wait too. At most 80 % of the server's `deadlock_timeout` (a writer
    /// waiting on one of the tables longer than that may be ended by the server's deadlock
    /// check): a longer one is cut to that.
    public var cutOverLockTimeout: Duration = .milliseconds(500)
    /// Cut-over attempts before the migration gives up (the store is then as it was).
    public var cutOverAttempts = 20
    /// At most this many rows a second, on average, copied, migrated and caught up, so the
    /// migration leaves the server room for its users; `nil` goes as fast as it can. The
    /// cut-over is not paced: it holds the writers off.
    public var maximumRowsPerSecond: Int?
    /// Called at each phase, on the migration's task, which waits for it: to report where
    /// the migration is, or (in tests) to write the store at that moment.
    public var phaseObserver: (@Sendable (OnlineMigrationPhase) async throws -> Void)?

    /// The default options: rounds of 10 000 changes, a 500 ms cut-over lock wait, no pacing.
    public init() {}
}

/// Where an online migration is, for ``OnlineMigrationOptions/phaseObserver``.
public enum OnlineMigrationPhase: Sendable, Hashable, CustomStringConvertible {
    /// The triggers record every change from here on; nothing is copied yet.
    case captureInstalled
    /// The store's rows are copied, as one snapshot; the copy is not migrated yet.
    case copied
    /// The copy is migrated to the target version; the changes since the copy are not.
    case bulkMigrated
    /// A catch-up round's store is migrated; its changes are taken (in a transaction not
    /// committed yet) and its results not merged into the copy.
    case roundMigrated(round: Int)
    /// A catch-up round committed.
    case caughtUp(round: Int, changes: Int)
    /// The cut-over is about to lock the store's tables (attempt 1, 2, …).
    case cutOverLocking(attempt: Int)
    /// The store's tables are locked against writers; the last changes are not migrated yet.
    case cutOverLocked

    /// The phase in a few words, for logs.
    public var description: String {
        switch self {
        case .captureInstalled: "capture installed"
        case .copied: "store copied"
        case .bulkMigrated: "copy migrated"
        case .roundMigrated(let round): "catch-up round \(round): migrated, not merged"
        case .caughtUp(let round, let changes): "catch-up round \(round): \(changes) changes"
        case .cutOverLocking(let attempt): "cut-over attempt \(attempt): locking"
        case .cutOverLocked: "cut-over: writers held off"
        }
    }
}
