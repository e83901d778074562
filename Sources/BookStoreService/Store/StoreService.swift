import BookStore
import Foundation
import Logging
import Persistence
import ServiceLifecycle

/// Brings the store to the current model while the server already listens, then keeps it
/// open until shutdown: a `Service` of the application's service group.
///
/// - A missing store is created empty at the current model.
/// - An outdated one is migrated (the framework logs each stage with its step, entity
///   mapping, rows and duration), its progress published on the ``StoreGate``; with
///   `migrate: false` it waits, polling, for another process to migrate it.
/// - A graceful shutdown during the migration cancels it; the framework leaves the store
///   as it was at its last completed step.
/// - The store is closed after the server has stopped: the service group shuts services
///   down in reverse order, and the server comes after this one.
///
/// A store that cannot be opened or migrated (unreachable, newer than the app, a full disk)
/// ends the service with the error: the whole service group shuts down gracefully, and
/// ``BookStoreService/run()`` throws the error.
struct StoreService: Service {
    let configuration: ServiceConfiguration
    let gate: StoreGate
    let logger: Logger
    /// Ends the service gracefully when the store cannot be served.
    var failure = StoreFailureRelay()

    func run() async throws {
        let container: PersistentContainer
        do {
            container = try await cancelWhenGracefulShutdown { try await self.open() }
        } catch  where Self.isCancellation(error) {
            gate.move(to: .stopped)
            logger.notice(
                "shut down before the store was ready; the store is as it was at its last completed migration step",
                metadata: [LoggingKeys.store: "\(configuration.store)"]
            )
            return
        } catch {
            gate.move(to: .stopped)
            logger.error("the store cannot be served", metadata: [LoggingKeys.store: "\(configuration.store)", "error": "\(error)"])
            // Returning before the group shuts down would cancel the server mid-request.
            guard await failure.fail(with: error) else { throw error }
            try? await gracefulShutdown()
            return
        }
        gate.move(to: .ready(container))
        logger.info("store ready", metadata: [LoggingKeys.store: "\(configuration.store)", LoggingKeys.modelVersion: "\(container.model.name)"])
        // Cancellation (rather than a graceful shutdown) ends the wait the same way: close.
        try? await gracefulShutdown()
        gate.move(to: .stopped)
        await container.store.close()
        logger.info("store closed", metadata: [LoggingKeys.store: "\(configuration.store)"])
    }

    private func open() async throws -> PersistentContainer {
        let models = configuration.models
        let url = configuration.store
        do {
            // A current store opens at once, without a connection to ask the migrator first.
            return try await PersistentContainer.open(model: models.current, store: url, options: .existingOnly, logger: logger)
        } catch let error as StoreError where error.code == .storeNotFound || error.code == .incompatibleModel {
            // Missing or written by another version: the migrator says which, and what to do.
        }
        let migrator = try BookStoreMigration.migrator(models: models, logger: logger)
        var plan: MigrationPlan
        do {
            plan = try await migrator.plan(forStoreAt: url)
        } catch let error as StoreError where error.code == .storeNotFound {
            logger.notice(
                "no store yet; creating an empty one",
                metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(models.current.name)"]
            )
            return try await PersistentContainer.open(model: models.current, store: url, options: .createIfMissing, logger: logger)
        }
        // A store migrated back on purpose is not taken forward again by whichever replica of
        // the newer release starts next: only by `bookstore migrate`, asked for. The migrator
        // refuses it too (under its lock, for a store taken back while this replica waited).
        while !plan.isEmpty {
            let rolledBackFrom = plan.storeMigratedBackFrom
            if !configuration.migrate || rolledBackFrom != nil {
                plan = try await waitForMigration(plan, migrator: migrator, rolledBackFrom: rolledBackFrom)
                continue
            }
            do {
                try await migrate(plan)
                break
            } catch let error as MigrationError where error.code == .storeRolledBack {
                plan = try await migrator.plan(forStoreAt: url)
            }
        }
        return try await PersistentContainer.open(model: models.current, store: url, options: .existingOnly, logger: logger)
    }

    private func migrate(_ plan: MigrationPlan) async throws {
        gate.move(to: .migrating(StoreGate.MigrationReport(startOf: plan)))
        logger.notice(
            configuration.onlineMigration == nil
                ? "the store needs migrating; data requests get 503 until it is done"
                : "the store needs migrating; migrating online while the previous release serves, data requests here get 503 until it is done",
            metadata: [
                LoggingKeys.store: "\(configuration.store)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)",
                "bookstore.migration.steps": "\(plan.steps.map(\.description).joined(separator: "; "))",
            ]
        )
        try await configuration.beforeMigration(plan)
        let gate = self.gate
        var online = configuration.onlineMigration
        if online != nil, !configuration.store.migratesOnline {
            // An embedded store has one process, this one: nothing serves it meanwhile.
            logger.notice(
                "online migration asked for, but the store is migrated offline: its engine has none (an embedded store is served by this process alone)",
                metadata: [LoggingKeys.store: "\(configuration.store)"]
            )
            online = nil
        }
        let ran = try await StoreAdministration(models: configuration.models, logger: logger)
            .migrate(configuration.migrationStore, online: online) { gate.report($0) }
        if ran.isEmpty {
            logger.info("another process migrated the store meanwhile", metadata: [LoggingKeys.store: "\(configuration.store)"])
        }
    }

    /// `--no-migrate`: polls until another process has migrated the store.
    private func waitForMigration(_ plan: MigrationPlan, migrator: ProgressiveMigrator, rolledBackFrom: String?) async throws -> MigrationPlan {
        var plan = plan
        gate.move(to: .waitingForMigration(storeVersion: plan.storeVersion.name, rolledBackFrom: rolledBackFrom))
        logger.warning(
            rolledBackFrom == nil
                ? "the store needs migrating and --no-migrate was given; waiting for `bookstore migrate`"
                : "the store was migrated back (a rollback), which start-up does not undo; waiting for `bookstore migrate` to migrate it forward again",
            metadata: [
                LoggingKeys.store: "\(configuration.store)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)",
                "bookstore.store.migrated_back_from": "\(rolledBackFrom ?? "-")",
            ]
        )
        while !plan.isEmpty {
            try await Task.sleep(for: configuration.migrationPollInterval)
            plan = try await migrator.plan(forStoreAt: configuration.store)
            let stillRolledBack = plan.storeMigratedBackFrom
            // No longer taken back (migrated meanwhile, to an earlier version than this one
            // serves): the service migrates it, unless told not to.
            if rolledBackFrom != nil && stillRolledBack == nil && configuration.migrate { return plan }
            gate.move(to: .waitingForMigration(storeVersion: plan.storeVersion.name, rolledBackFrom: stillRolledBack))
        }
        return plan
    }

    /// A shutdown during start-up stops reads and migrations with errors of their own: a
    /// statement interrupted, a migration cancelled, perhaps wrapped in a store's error.
    static func isCancellation(_ error: any Error) -> Bool {
        DatabaseCancellation.isCancellation(error)
    }
}
