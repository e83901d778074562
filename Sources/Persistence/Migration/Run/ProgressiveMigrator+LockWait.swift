import Logging

extension ProgressiveMigrator {
    /// What waiting for the migration lock came to, for a run.
    enum LockOutcome {
        /// The lock is this run's.
        case locked(any MigrationLock)
        /// Another process migrated the store to this run's destination while it waited;
        /// the plan (empty) is what the run returns.
        case migratedMeanwhile(MigrationPlan)
    }

    /// Waits for the migration lock, or until the store is at `destination`
    /// (``MigrationBackend/acquireLock(timeout:logger:orStoreAt:)``). A store found at it
    /// is planned again: empty, the run is done; not (another destination than the plan
    /// found at first), the run waits for the lock.
    func lockOrMigratedPlan(
        _ backend: any MigrationBackend,
        storeAt url: StoreURL,
        to target: String?,
        destination: ManagedObjectModel
    ) async throws -> LockOutcome {
        var destination: ManagedObjectModel? = destination
        // One deadline for the whole wait, however often the store is planned again.
        let deadline = ContinuousClock.now + lockTimeout
        while true {
            let timeout = max(.zero, deadline - ContinuousClock.now)
            switch try await backend.acquireLock(timeout: timeout, logger: logger, orStoreAt: destination) {
            case .acquired(let lock):
                return .locked(lock)
            case .storeReached:
                let plan = try await plan(forStoreAt: url, to: target)
                if plan.isEmpty {
                    logger.info(
                        "store was migrated by another process meanwhile",
                        metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)"]
                    )
                    return .migratedMeanwhile(plan)
                }
                destination = nil
            }
        }
    }
}
