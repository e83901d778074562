extension ProgressiveMigrator {
    /// Migrates the store at `url` to `target` (the current version by default) while other
    /// processes keep reading and writing it at its version; returns the plan it ran, empty
    /// when the store was current.
    ///
    /// The store is copied and the copy migrated while a record of every change made
    /// meanwhile grows; the changed objects are then migrated again, and the copy replaces
    /// the store in a cut-over that holds writers off for a moment (``OnlineMigrationOptions``).
    /// A process of the previous version finds out on its next statement
    /// (``StoreError/Code/migratedSinceOpened``).
    ///
    /// ```swift
    /// let migrator = ProgressiveMigrator(chain: chain, logger: logger)
    /// try await migrator.migrateStoreOnline(at: .postgres(configuration))
    /// ```
    ///
    /// PostgreSQL only. The plan's steps must keep each object's primary key and migrate
    /// each object on its own: every destination root entity made from one source root
    /// entity, and policies and managers that say they do not fetch from the stores.
    ///
    /// - Throws: ``MigrationError``: ``MigrationError/Code/cannotMigrateOnline`` for a SQLite
    ///   store or a plan that cannot run online (before anything is written);
    ///   ``MigrationError/Code/storeBusy`` when the cut-over could not hold the writers off.
    ///   The store is then as it was, and what the run made beside it is removed.
    @discardableResult
    public func migrateStoreOnline(
        at url: StoreURL,
        to target: String? = nil,
        storeVersion: String? = nil,
        options: OnlineMigrationOptions = OnlineMigrationOptions(),
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> MigrationPlan {
        defer { broadcast.finish() }
        // Refused before anything is read, locked or written.
        let backend = try url.engine.migrationBackend()
        if let refusal = backend.onlineRefusal { throw refusal }
        let unlocked = try await plan(forStoreAt: url, to: target, storeVersion: storeVersion)
        if unlocked.goesBack { throw Self.noOnlineWayBack(unlocked, store: url) }
        try refuseUndoingRollback(unlocked, target: target, at: url)
        guard !unlocked.isEmpty else {
            try await removeLeftoversOfKilledRuns(at: url, plan: unlocked)
            return unlocked
        }
        _ = try OnlineKeyCorrespondence(plan: unlocked, policies: chain.policies)
        let lock: any MigrationLock
        switch try await lockOrMigratedPlan(backend, storeAt: url, to: target, destination: unlocked.targetVersion) {
        case .locked(let held): lock = held
        case .migratedMeanwhile(let plan): return plan
        }
        do {
            let metadata = try await PersistentStore.metadata(at: url)
            let plan = try await self.plan(forStoreAt: url, to: target, storeVersion: metadata.isForeign ? storeVersion : nil)
            // Another process may have migrated it past the target meanwhile: online goes forward only.
            if plan.goesBack { throw Self.noOnlineWayBack(plan, store: url) }
            try refuseUndoingRollback(plan, target: target, at: url)
            guard !plan.isEmpty else {
                logger.info(
                    "store was migrated by another process meanwhile",
                    metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)"]
                )
                await lock.release()
                return plan
            }
            logger.info(
                "migrating store online",
                metadata: [
                    LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)",
                    "persistence.migration.target": "\(plan.targetVersion.name)", "persistence.migration.steps": "\(plan.steps.count)",
                ]
            )
            let started = ContinuousClock.now
            try await OnlineMigrationRun(migrator: self, plan: plan, backend: backend, options: options, onProgress: progress).run()
            logger.info(
                "migrated store",
                metadata: [
                    LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.targetVersion.name)",
                    LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
                ]
            )
            await lock.release()
            return plan
        } catch is MigrationAbort {
            await lock.abandon()
            throw MigrationAbort()
        } catch {
            await DatabaseCancellation.shielded { await lock.release() }
            throw error
        }
    }
}
