import Logging

/// Runs a plan online: the store's writers go on while it runs, and are held off only for
/// the cut-over (see ``OnlineMigrationWorkspace`` and docs/ONLINE-MIGRATIONS.md).
///
/// 1. Capture: every change of the store's tables is recorded from here on.
/// 2. Copy: the store, as one snapshot, into a store beside it.
/// 3. Bulk: the copy is migrated as any store is, offline (it has no other writer), with
///    the plan's every step, fused and resumable as usual, and progress reported.
/// 4. Catch-up: rounds that migrate the changed rows again, until few are left.
/// 5. Cut-over: writers held off, the last changes migrated, the copy swapped in: one
///    transaction. When the writers' transactions keep the lock from being had in time, it
///    lets go, catches up and tries again.
///
/// The caller holds the backend's lock.
struct OnlineMigrationRun {
    let migrator: ProgressiveMigrator
    let plan: MigrationPlan
    let backend: any MigrationBackend
    let options: OnlineMigrationOptions
    let onProgress: (@Sendable (MigrationProgress) -> Void)?

    var logger: Logger { migrator.logger }
    /// Shared by the copy, the bulk migration and the rounds.
    var throttle: MigrationThrottle? { options.maximumRowsPerSecond.map { MigrationThrottle(rowsPerSecond: $0) } }
    var store: StoreURL { backend.store }

    func run() async throws {
        let keys = try OnlineKeyCorrespondence(plan: plan, policies: migrator.chain.policies)
        let workspace = try await backend.prepareOnlineWorkspace(for: plan, keys: keys, logger: logger)
        do {
            try await run(in: workspace)
            await workspace.cleanUp()
        } catch is MigrationAbort {
            await workspace.abandon()
            throw MigrationAbort()
        } catch {
            await DatabaseCancellation.shielded { await workspace.cleanUp() }
            // Whatever failed once the run was cancelled failed because of it.
            if Task.isCancelled, !(error is MigrationError) { throw cancelled() }
            throw error
        }
    }

    private func run(in workspace: any OnlineMigrationWorkspace) async throws {
        let throttle = self.throttle
        var started = ContinuousClock.now
        try await workspace.installCapture()
        log("capture", since: started)
        try await observe(.captureInstalled)

        started = ContinuousClock.now
        let copy = try await workspace.copyStore(throttle: throttle)
        log("copy", since: started)
        try await observe(.copied)

        started = ContinuousClock.now
        try await migrateCopy(copy, throttle: throttle)
        log("bulk", since: started)
        started = ContinuousClock.now
        try await workspace.readyToServe(copy)
        log("ready to serve", since: started)
        try await observe(.bulkMigrated)

        var round = 0
        // The fewest changes left waiting so far, the rounds since, and the most a round took
        // from the one that left the fewest on.
        var (fewest, stalled, largest) = (Int.max, 0, 0)
        while true {
            started = ContinuousClock.now
            round += 1
            let taken = try await catchUp(workspace, into: copy, round: round)
            try await throttle?.pace(rows: taken)
            let waiting = try await workspace.pendingChanges()
            log("catch-up", since: started, changes: taken, waiting: waiting)
            try await observe(.caughtUp(round: round, changes: taken))
            if waiting <= options.changesLeftForCutOver { break }
            (fewest, stalled, largest) = waiting < fewest ? (waiting, 0, taken) : (fewest, stalled + 1, max(largest, taken))
            guard stalled >= options.maximumRoundsWithoutProgress else { continue }
            // One round takes all that waits, and it is no more than twice the most a round
            // took since: writers keep pace with the rounds (unevenly perhaps: more may wait
            // than the last round took), and the last round, with writers held off, is about
            // as long as the recent ones. More waiting means writers outpace the rounds.
            let bound = min(options.changesPerRound, 2 * largest)
            if waiting <= bound {
                logger.notice(
                    "writers keep pace with the catch-up rounds; cutting over with about a round's worth of changes left",
                    metadata: [
                        LoggingKeys.store: "\(store)", LoggingKeys.changes: "\(waiting)",
                    ]
                )
                break
            }
            // A burst may settle: as many rounds again before the copy is given up.
            guard stalled >= 2 * options.maximumRoundsWithoutProgress else { continue }
            throw MigrationError(
                .storeBusy,
                "other processes write the store faster than the online migration catches up: \(waiting) changes wait, no fewer than \(stalled) rounds ago, more than the cut-over may migrate while it holds writers off (\(bound): twice the most a recent round took, at most a round's \(options.changesPerRound))",
                hint:
                    "the store is as it was, at model version '\(plan.storeVersion.name)'; run the migration again when fewer writes arrive, or migrate offline",
                store: store.description
            )
        }

        let migrator = self.migrator
        for attempt in 1...max(options.cutOverAttempts, 1) {
            try checkCancellation()
            try await observe(.cutOverLocking(attempt: attempt))
            started = ContinuousClock.now
            var lastChanges = 0
            let swapped = try await workspace.cutOver(to: copy, lockTimeout: options.cutOverLockTimeout) {
                try await observe(.cutOverLocked)
                while true {
                    round += 1
                    let taken = try await catchUp(workspace, into: copy, round: round)
                    lastChanges += taken
                    if taken == 0 { break }
                }
            } swapping: {
                try migrator.pass(.cutOverSwapping)
            } committed: {
                try migrator.pass(.cutOverCommitted)
            }
            if swapped {
                log("cut-over", since: started, changes: lastChanges)
                try migrator.pass(.migrated)
                return
            }
            logger.notice(
                "other sessions kept the store's tables longer than the cut-over waits; catching up and trying again",
                metadata: [
                    LoggingKeys.store: "\(store)", "persistence.migration.attempt": "\(attempt) of \(options.cutOverAttempts)",
                ]
            )
            try await Task.sleep(for: options.cutOverLockTimeout)
            round += 1
            _ = try await catchUp(workspace, into: copy, round: round)
        }
        throw MigrationError(
            .storeBusy,
            "the online migration could not hold the store's writers off for its cut-over: \(max(options.cutOverAttempts, 1)) attempts waited \(options.cutOverLockTimeout) each for transactions that kept its tables",
            hint:
                "the store is as it was, at model version '\(plan.storeVersion.name)'; run the migration again when fewer long transactions write it, or migrate offline",
            store: store.description
        )
    }

    /// Migrates the copy as any store, reporting its progress as the migration's.
    private func migrateCopy(_ copy: StoreURL, throttle: MigrationThrottle?) async throws {
        let bulk = ProgressiveMigrator(
            chain: migrator.chain,
            batchSize: migrator.batchSize,
            lockTimeout: migrator.lockTimeout,
            fusesSteps: migrator.fusesSteps,
            logger: logger,
            faultInjection: migrator.faultInjection,
            throttle: throttle
        )
        let (broadcast, onProgress) = (migrator.broadcast, self.onProgress)
        try await bulk.migrateStore(at: copy, to: plan.targetVersion.name) { progress in
            broadcast.yield(progress)
            onProgress?(progress)
        }
    }

    /// One catch-up round; its round store is migrated as any store, its stages logged at
    /// debug level only (a round is small, and there may be many).
    private func catchUp(_ workspace: any OnlineMigrationWorkspace, into copy: StoreURL, round number: Int) async throws -> Int {
        try checkCancellation()
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        let round = ProgressiveMigrator(
            chain: migrator.chain,
            batchSize: migrator.batchSize,
            lockTimeout: migrator.lockTimeout,
            fusesSteps: migrator.fusesSteps,
            logger: quiet
        )
        let target = plan.targetVersion.name
        return try await workspace.catchUp(into: copy, limit: options.changesPerRound) { roundStore in
            try await round.migrateStore(at: roundStore, to: target)
            try await observe(.roundMigrated(round: number))
        }
    }

    private func checkCancellation() throws {
        if Task.isCancelled { throw cancelled() }
    }

    private func cancelled() -> MigrationError {
        MigrationError(.cancelled, "the migration was cancelled", hint: "the store is as it was; run the migration again", store: store.description)
    }

    private func observe(_ phase: OnlineMigrationPhase) async throws {
        try await options.phaseObserver?(phase)
    }

    private func log(_ phase: String, since started: ContinuousClock.Instant, changes: Int? = nil, waiting: Int? = nil) {
        var metadata: Logger.Metadata = [
            LoggingKeys.store: "\(store)",
            LoggingKeys.onlinePhase: "\(phase)",
            LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
        ]
        if let changes { metadata[LoggingKeys.changes] = "\(changes)" }
        if let waiting { metadata["persistence.migration.changes_waiting"] = "\(waiting)" }
        logger.info("online migration phase", metadata: metadata)
    }
}
