import Foundation
import Logging

/// Runs a plan on a PostgreSQL store (a schema), each step whole or not at all:
///
/// - in-place steps run as ALTER statements in one transaction in the schema;
/// - set-based and streamed steps build the next version in a shadow schema beside it
///   (`<schema>_migrating_<id>`), then swap it in with two schema renames and a drop, in
///   one transaction.
///
/// A failure or a killed process leaves the store whole at the version of its last
/// completed step; the next run (under the migration lock) drops abandoned shadow schemas
/// and completes the migration.
struct PostgresMigrationRun {
    let migrator: ProgressiveMigrator
    let plan: MigrationPlan
    let url: StoreURL
    let configuration: PostgresConfiguration

    var logger: Logger { migrator.logger }

    func run() async throws {
        let original = try await PersistentStore.metadata(at: url)
        try await dropAbandonedShadows()
        var index = 0
        while index < plan.steps.count {
            if Task.isCancelled {
                throw MigrationError(.cancelled, "the migration was cancelled", hint: "the store is whole at the version of its last completed step; run the migration again", store: url.description)
            }
            let step = plan.steps[index]
            let started = ContinuousClock.now
            switch step.strategy {
            case .inPlace:
                try await runInPlace(step, original: original)
            case .setBased, .streamed:
                try await runIntoShadow(step, index: index, original: original)
            }
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStep: "\(index + 1)/\(plan.steps.count) \(step.source.name) → \(step.destination.name)",
                LoggingKeys.migrationStage: "\(step.strategy.rawValue)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
            if step.strategy == .inPlace {
                // Set-based and streamed steps report their own stages, and their end.
                migrator.report(MigrationProgress(
                    fractionCompleted: 1, stepFractionCompleted: 1, step: 1, stepCount: 1, sourceVersion: step.source.name,
                    destinationVersion: step.destination.name, stage: .inPlace), step: index, of: plan.steps.count)
            }
            index += 1
        }
    }

    private func metadata(for model: ManagedObjectModel, original: StoreMetadata) -> StoreMetadata {
        original.migrated(to: model, storeType: url.storeType)
    }

    private func withDatabase<T: Sendable>(_ configuration: PostgresConfiguration, _ body: (PostgresDatabase) async throws -> T) async throws -> T {
        let database: PostgresDatabase
        do {
            database = try await PostgresDatabase.open(configuration, readerCount: 0)
        } catch let error as DatabaseError {
            throw StoreError(.connectionFailed, error.message, hint: "check that the server is running and the store URL", store: url.description)
        }
        do {
            let result = try await body(database)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    private func runInPlace(_ step: MigrationPlan.Step, original: StoreMetadata) async throws {
        guard case .inPlace(let inPlace) = step.work else { return }
        let metadata = metadata(for: step.destination, original: original)
        do {
            try await withDatabase(configuration) { database in
                try await database.write { try inPlace.run(on: $0, metadata: metadata) }
            }
        } catch let error as MigrationError {
            throw error.at(url)
        } catch {
            throw MigrationError(.store, "the in-place migration \(step.source.name) → \(step.destination.name) failed and was rolled back",
                                 hint: "the store was not changed; report this with the output of `migrate --plan`", store: url.description, underlying: error)
        }
    }

    private func shadowPrefix() -> String { "\(configuration.schema)_migrating_" }

    private func runIntoShadow(_ step: MigrationPlan.Step, index: Int, original: StoreMetadata) async throws {
        var shadowConfiguration = configuration
        shadowConfiguration.schema = shadowPrefix() + UUID().uuidString.prefix(8).lowercased()
        let shadow = shadowConfiguration
        let shadowURL = StoreURL.postgres(shadow)
        do {
            if case .setBased(let setBased) = step.work {
                try await runSetBased(setBased, step: step, index: index, into: shadowURL, shadow: shadow)
            } else {
                try await runStreamed(step, index: index, into: shadowURL)
            }
            let metadata = metadata(for: step.destination, original: original)
            try await withDatabase(shadow) { database in
                try await AssociationTable(database: database).drop()
                try await database.write { try StoreCreation.writeMetadata(metadata, on: $0) }
            }
            try await swap(in: shadow.schema)
        } catch {
            try? await withDatabase(configuration) { database in
                _ = try await database.writeWithoutTransaction { try $0.execute("DROP SCHEMA IF EXISTS \(PostgresConfiguration.quoteIdentifier(shadow.schema)) CASCADE") }
            }
            if let error = error as? MigrationError { throw error.at(url) }
            throw MigrationError(.store, "step \(step.source.name) → \(step.destination.name) failed", hint: "the store was not changed",
                                 store: url.description, underlying: error)
        }
    }

    private func runStreamed(_ step: MigrationPlan.Step, index: Int, into shadowURL: StoreURL) async throws {
        let stepCount = plan.steps.count
        let migrator = self.migrator
        let passes = step.mappingModels.count
        for (pass, mapping) in step.mappingModels.enumerated() {
            let manager = step.managerType.init(configuration: MigrationManager.Configuration(
                sourceModel: step.source, destinationModel: step.destination, mappingModel: mapping,
                policies: migrator.chain.policies, destinationOptions: .workspace, logger: migrator.logger(forStep: index, of: stepCount, step)))
            manager.setProgressHandler { progress in
                guard let progress = progress.pass(pass, of: passes) else { return }
                migrator.report(progress, step: index, of: stepCount)
            }
            try await manager.migrateStore(from: url, to: shadowURL)
        }
    }

    /// Reports and logs as a set-based step on SQLite does: rows per entity mapping, then
    /// the validation, then the end.
    private func runSetBased(_ setBased: SetBasedMigration, step: MigrationPlan.Step, index: Int, into shadowURL: StoreURL, shadow: PostgresConfiguration) async throws {
        let stepCount = plan.steps.count
        let started = ContinuousClock.now
        let created = try await PersistentStore.open(shadowURL, model: step.destination, options: .createIfMissing, logger: logger)
        await created.close()
        let source = configuration.quotedSchema
        let written = try await withDatabase(shadow) { database in
            try await database.write { try setBased.run(on: $0, sourceSchema: source) }
        }
        try await migrator.completeSetBasedStep(step, index: index, of: stepCount, written: written, since: started, destination: shadowURL)
    }

    /// The shadow schema becomes the store in one transaction; the old tables go with it.
    private func swap(in shadowSchema: String) async throws {
        let store = configuration.quotedSchema
        let old = PostgresConfiguration.quoteIdentifier("\(configuration.schema)_replaced_\(UUID().uuidString.prefix(8).lowercased())")
        let shadow = PostgresConfiguration.quoteIdentifier(shadowSchema)
        try await withDatabase(configuration) { database in
            try await database.write { connection in
                try connection.execute("ALTER SCHEMA \(store) RENAME TO \(old)")
                try connection.execute("ALTER SCHEMA \(shadow) RENAME TO \(store)")
                try connection.execute("DROP SCHEMA \(old) CASCADE")
            }
        }
    }

    /// Shadow schemas of killed runs: only this run can be migrating (it holds the lock).
    private func dropAbandonedShadows() async throws {
        let prefix = shadowPrefix()
        try await withDatabase(configuration) { database in
            let names = try await database.read { connection in
                try connection.rows("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", [.text(prefix)]).compactMap { $0[0].text }
            }
            for name in names {
                _ = try await database.writeWithoutTransaction { try $0.execute("DROP SCHEMA \(PostgresConfiguration.quoteIdentifier(name)) CASCADE") }
                logger.notice("removed the shadow schema of an interrupted migration", metadata: [LoggingKeys.store: "\(url)", "persistence.migration.schema": "\(name)"])
            }
        }
    }
}
