import Foundation
import Logging

/// Runs a plan on a SQLite store file, so that the store is never left half-migrated.
///
/// The caller holds the store's ``SQLiteMigrationLock``; the store's own WAL is first
/// written back into the file (committed data only moves, nothing changes), and a store
/// that another process is using is refused.
///
/// - In-place steps only: all of them in one write transaction in the store.
/// - Otherwise: the steps run on files in a ``WorkFolder`` beside the store (same file
///   system), each streamed step into a new file, each in-place step in its input; the
///   last file gets the store's permissions and owner, is synced and renamed over the
///   store in one atomic step. Until then the original is only read, and stays the
///   backup: any failure deletes the work folder and leaves the store as it was.
struct SQLiteMigrationRun {
    let migrator: ProgressiveMigrator
    let plan: MigrationPlan
    let url: StoreURL
    let path: String

    var logger: Logger { migrator.logger }

    func run() async throws {
        let original = try await PersistentStore.metadata(at: url)
        if FileManager.default.fileExists(atPath: path + "-journal") {
            throw MigrationError(
                .store, "the store has a rollback journal (-journal) left by an interrupted write",
                hint: "open the store once with the app that wrote it, or with sqlite3, so SQLite rolls the journal back; then migrate. The store was not changed",
                store: url.description)
        }
        do {
            try await checkpoint(path)
        } catch let error as DatabaseError {
            throw MigrationError(.store, "the store is in use by another process", hint: "stop the processes that use it (such as the service) and migrate again; the store was not changed",
                                 store: url.description, underlying: error)
        }
        if plan.steps.allSatisfy({ $0.strategy == .inPlace }) {
            try await runInPlace(on: path, steps: Array(plan.steps.enumerated()), original: original, committedInStore: true)
            return
        }
        WorkFolder.removeAbandoned(besideStoreAt: path, logger: logger)
        let work = try WorkFolder(besideStoreAt: path)
        defer { work.remove() }
        let workFolder = work.url

        var current = path
        var index = 0
        while index < plan.steps.count {
            try checkCancellation()
            let step = plan.steps[index]
            if step.strategy == .inPlace {
                // Consecutive in-place steps run together, in one transaction on a copy.
                var group: [(offset: Int, element: MigrationPlan.Step)] = []
                while index < plan.steps.count, plan.steps[index].strategy == .inPlace {
                    group.append((index, plan.steps[index]))
                    index += 1
                }
                if current == path {
                    let copy = workFolder.appendingPathComponent("step\(group[0].offset + 1).sqlite").path
                    let source = path
                    try await FileSystem.run { try FileManager.default.copyItem(atPath: source, toPath: copy) }
                    current = copy
                }
                try await runInPlace(on: current, steps: group, original: original, committedInStore: false)
                continue
            }
            let output = workFolder.appendingPathComponent("step\(index + 1).sqlite").path
            if case .setBased(let setBased) = step.work {
                try await runSetBased(setBased, step: step, index: index, from: current, to: output, original: original)
            } else {
                try await runStreamed(step, index: index, from: current, to: output, original: original)
            }
            if current != path { removeStoreFiles(current) }
            current = output
            index += 1
        }
        try checkCancellation()
        try await replaceStore(with: current)
    }

    /// The destination's metadata: its model's hashes, the store's identity and the keys
    /// the store carried that are not Core Data's.
    private func metadata(for model: ManagedObjectModel, original: StoreMetadata) -> StoreMetadata {
        original.migrated(to: model, storeType: url.storeType)
    }

    private func checkCancellation() throws {
        if Task.isCancelled {
            throw MigrationError(.cancelled, "the migration was cancelled", hint: "the store was not changed; run the migration again", store: url.description)
        }
    }

    /// Writes the WAL into the file, so copies and renames carry every committed row.
    /// Without a WAL file every committed page is in the main file already, and the file is
    /// not opened at all (opening it for writing could change its header).
    private func checkpoint(_ file: String) async throws {
        guard FileManager.default.fileExists(atPath: file + "-wal") else { return }
        try await withDatabase(file) { try await $0.checkpoint() }
    }

    /// Runs `body` on a database of its own, closed afterwards whatever happens, so the
    /// WAL files are gone before files are copied or renamed.
    private func withDatabase<T: Sendable>(_ file: String, _ body: (SQLiteDatabase) async throws -> T) async throws -> T {
        let database = try await SQLiteDatabase.open(path: file, mode: .readWrite, readerCount: 0)
        do {
            let result = try await body(database)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    /// Runs consecutive in-place steps in one transaction. `committedInStore` says the file
    /// is the store itself: once the transaction commits the migration has happened, so a
    /// later failure (writing the WAL back) is a warning, not an error.
    private func runInPlace(on file: String, steps: [(offset: Int, element: MigrationPlan.Step)], original: StoreMetadata, committedInStore: Bool) async throws {
        let started = ContinuousClock.now
        let works = steps.compactMap { offset, step -> (inPlace: InPlaceMigration, metadata: StoreMetadata)? in
            guard case .inPlace(let inPlace) = step.work else { return nil }
            return (inPlace, metadata(for: step.destination, original: original))
        }
        // A copy in the work folder is thrown away if anything fails, and synced before it replaces the store.
        let database = try await SQLiteDatabase.open(path: file, mode: .readWrite, readerCount: 0, isDurable: committedInStore)
        do {
            try await database.write { connection in
                for work in works { try work.inPlace.run(on: connection, metadata: work.metadata) }
            }
        } catch {
            await database.close()
            if let error = error as? MigrationError, error.code == .validationFailed { throw error.at(url) }
            let names = steps.map { "\($0.element.source.name) → \($0.element.destination.name)" }.joined(separator: ", ")
            throw MigrationError(.store, "the in-place migration \(names) failed and was rolled back",
                                 hint: "the store was not changed; report this with the output of `migrate --plan`", store: url.description, underlying: error)
        }
        do {
            try await database.checkpoint()
        } catch where committedInStore {
            logger.warning("the migrated store's WAL was not written back yet; SQLite does it on the next open", metadata: [LoggingKeys.store: "\(url)"])
        }
        await database.close()
        for (offset, step) in steps {
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStep: "\(offset + 1)/\(plan.steps.count) \(step.source.name) → \(step.destination.name)",
                LoggingKeys.migrationStage: "\(MigrationProgress.Stage.inPlace.rawValue)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
            migrator.report(MigrationProgress(
                fractionCompleted: 1, stepFractionCompleted: 1, step: 1, stepCount: 1, sourceVersion: step.source.name,
                destinationVersion: step.destination.name, stage: .inPlace), step: offset, of: plan.steps.count)
        }
    }

    private func runStreamed(_ step: MigrationPlan.Step, index: Int, from input: String, to output: String, original: StoreMetadata) async throws {
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
            do {
                try await manager.migrateStore(from: .sqlite(input), to: .sqlite(output))
            } catch let error as MigrationError {
                var error = error
                error.store = error.store ?? url.description
                throw error
            } catch {
                throw MigrationError(.store, "step \(step.source.name) → \(step.destination.name) failed", hint: "the store was not changed",
                                     store: url.description, underlying: error)
            }
        }
        // Hand the step's store over: no association table, the original's identity.
        let metadata = metadata(for: step.destination, original: original)
        try await withDatabase(output) { database in
            try await AssociationTable(database: database).drop()
            try await database.write { try StoreCreation.writeMetadata(metadata, on: $0) }
            try await database.checkpoint()
        }
    }

    private func runSetBased(_ setBased: SetBasedMigration, step: MigrationPlan.Step, index: Int, from input: String, to output: String, original: StoreMetadata) async throws {
        let stepCount = plan.steps.count
        let started = ContinuousClock.now
        let created = try await PersistentStore.open(.sqlite(output), model: step.destination, options: .createIfMissing, logger: logger)
        await created.close()
        let source = SQLiteStoreFile.readOnlyURI(for: input)
        let metadata = metadata(for: step.destination, original: original)
        let written: [(mapping: String, rows: Int)]
        do {
            written = try await withDatabase(output) { database in
                _ = try await database.writeWithoutTransaction { try $0.run("ATTACH DATABASE ? AS src", [.text(source)]) }
                let written = try await database.write { connection in
                    let written = try setBased.run(on: connection, sourceSchema: "src")
                    try StoreCreation.writeMetadata(metadata, on: connection)
                    return written
                }
                try await database.writeWithoutTransaction { try $0.execute("DETACH DATABASE src") }
                try await database.checkpoint()
                return written
            }
        } catch let error as DatabaseError {
            throw MigrationError(.store, "step \(step.source.name) → \(step.destination.name) failed", hint: "the store was not changed",
                                 store: url.description, underlying: error)
        }
        try await migrator.completeSetBasedStep(step, index: index, of: stepCount, written: written, since: started, destination: .sqlite(output))
    }

    /// Renames the finished file over the store: one atomic step on the same file system.
    private func replaceStore(with file: String) async throws {
        let store = path
        let storeURL = url
        try await FileSystem.run {
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
                // A WAL left beside the result would belong to no file after the rename.
                let size = (try? FileManager.default.attributesOfItem(atPath: file + suffix)[.size] as? Int) ?? 0
                if suffix == "-wal", size > 0 {
                    throw MigrationError(.store, "the migrated store still has unwritten changes in its WAL", hint: "the store was not changed; run the migration again", store: storeURL.description)
                }
                try? FileManager.default.removeItem(atPath: file + suffix)
            }
            // The store's WAL was written back before the migration; one with content now
            // means someone wrote to the store meanwhile, and the rename would lose that.
            let wal = (try? FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int) ?? 0
            if wal > 0 {
                throw MigrationError(.store, "the store was written to while it was being migrated",
                                     hint: "stop the processes that use the store and migrate again; the store was not changed", store: storeURL.description)
            }
            FileSystem.copyOwnership(from: store, to: file)
            try FileSystem.sync(file)
            // Stale shared-memory or empty WAL files must not be applied to the new file.
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
            try FileSystem.rename(file, to: store)
        }
        // The rename happened: from here on a failure is only a warning.
        do {
            let folder = URL(fileURLWithPath: store).deletingLastPathComponent().path
            try await FileSystem.run { try FileSystem.sync(folder) }
        } catch {
            logger.warning("the store's folder could not be synced after the migrated store replaced the original", metadata: [LoggingKeys.store: "\(url)"])
        }
    }

    private func removeStoreFiles(_ file: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
    }
}
