/// A point a migration passes, where a test can make it fail to show what a failure there
/// leaves (``ProgressiveMigrator/init(chain:batchSize:lockTimeout:logger:faultInjection:)``).
/// Steps are numbered from 1, as the plan lists them.
///
/// ```swift
/// let migrator = ProgressiveMigrator(chain: chain, logger: logger) { checkpoint in
///     if checkpoint == .rowsCreated(step: 3, entityMapping: "PublicationToPublication", rows: 2_000) { throw MigrationAbort() }
/// }
/// ```
@_spi(Testing) public enum MigrationCheckpoint: Sendable, Hashable, CustomStringConvertible {
    /// A stage of an entity mapping of a streamed step is done and logged.
    case stageFinished(step: Int, stage: MigrationProgress.Stage, entityMapping: String)
    /// A streamed step has created `rows` instances for an entity mapping so far (after
    /// each batch saved, or each chunk of an `INSERT … SELECT`).
    case rowsCreated(step: Int, entityMapping: String, rows: Int)
    /// A step is done and logged: committed in place, or its output complete (on
    /// PostgreSQL, swapped in).
    case stepFinished(step: Int)
    /// The migrated store is replacing the store: on SQLite the new file is complete and
    /// synced, not yet renamed over the store; on PostgreSQL, inside the transaction that
    /// swaps the schemas, after the store's schema was renamed away.
    case swapping(step: Int)
    /// SQLite: the writers' lock is let go for the copy of the migrated store into the
    /// store's file, which takes it again at once; another writer may commit here.
    case lockLetGo
    /// An online migration's cut-over, inside its transaction, after the store's schema
    /// was renamed away and before the migrated copy takes its name.
    case cutOverSwapping
    /// An online migration's cut-over committed: the store is migrated; its old tables
    /// and the change capture are not dropped yet.
    case cutOverCommitted
    /// The store is migrated; what the run made beside it (a SQLite work folder, the lock
    /// file) is not removed yet.
    case migrated

    /// The checkpoint in a few words, as a test's failure message names it.
    public var description: String {
        switch self {
        case .stageFinished(let step, let stage, let mapping): "step \(step): \(mapping) \(stage.rawValue) finished"
        case .rowsCreated(let step, let mapping, let rows): "step \(step): \(mapping) created \(rows) rows"
        case .stepFinished(let step): "step \(step) finished"
        case .swapping(let step): "step \(step) swapping in"
        case .lockLetGo: "the writers' lock let go for the copy"
        case .cutOverSwapping: "the online cut-over swapping in"
        case .cutOverCommitted: "the online cut-over committed, not cleaned up"
        case .migrated: "migrated, not cleaned up"
        }
    }
}

/// Called at every ``MigrationCheckpoint``: throwing fails the migration there, as any
/// error would; throwing ``MigrationAbort`` stops it as a killed process would.
@_spi(Testing) public typealias MigrationFaultInjection = @Sendable (MigrationCheckpoint) throws -> Void

/// Thrown by a ``MigrationFaultInjection`` to stop the migration the way a killed process
/// stops: nothing is cleaned up (work files, shadow schemas and the lock file stay), the
/// lock is dropped as the kernel or the server would drop it, and the next run must cope.
@_spi(Testing) public struct MigrationAbort: Error, Sendable, CustomStringConvertible {
    /// An abort; throw it from a fault injection.
    public init() {}
    /// Says the migration was aborted by a fault injection.
    public var description: String { "the migration was aborted by a fault injection" }
}
