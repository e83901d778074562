import Logging

extension ProgressiveMigrator {
    /// What waiting for the migration lock came to.
    enum LockWait: Sendable {
        /// The lock is this run's.
        case acquired(any MigrationLock)
        /// While this run waited, another process's migration brought the store to this
        /// run's destination; that process still holds the lock while it cleans up.
        case migratedMeanwhile
    }

    /// Waits for the migration lock, or, where the backend reads the store meanwhile
    /// (``MigrationBackend/readsStoreWhileWaitingForLock``), until the store is at
    /// `destination`, whichever comes first.
    ///
    /// The next release's replicas wait here while one of them migrates: each is ready the
    /// moment the migration's last swap (or online cut-over) commits, not after the old
    /// tables and the change capture are dropped, which at a million rows takes a while.
    /// A lock taken just as the store was found migrated is let go again.
    ///
    /// - Throws: ``MigrationError/Code/storeBusy`` when neither came within the lock's timeout.
    func waitForLock(_ backend: any MigrationBackend, storeAt url: StoreURL, destination: ManagedObjectModel) async throws -> LockWait {
        let (timeout, logger) = (lockTimeout, self.logger)
        guard backend.readsStoreWhileWaitingForLock else {
            return .acquired(try await backend.acquireLock(timeout: timeout, logger: logger))
        }
        return try await withThrowingTaskGroup(of: LockWait.self) { group in
            group.addTask { .acquired(try await backend.acquireLock(timeout: timeout, logger: logger)) }
            group.addTask {
                while true {
                    try await Task.sleep(for: Self.storeWatchInterval)
                    // A failed read (the schema mid-swap) is read again next time.
                    if let metadata = try? await PersistentStore.metadata(at: url), destination.isCompatible(with: metadata) {
                        return .migratedMeanwhile
                    }
                }
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { preconditionFailure("two tasks were added") }
            group.cancelAll()
            if case .migratedMeanwhile = first {
                // The lock's task ends cancelled, or with the lock, which is not needed.
                while let other = await group.nextResult() {
                    if case .success(.acquired(let lock)) = other { await lock.release() }
                }
            }
            return first
        }
    }

    /// How often a run waiting for the lock reads the store: the lock is tried as often.
    static var storeWatchInterval: Duration { .milliseconds(100) }
}
