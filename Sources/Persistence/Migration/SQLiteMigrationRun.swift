import Foundation
import Logging

/// Runs a plan on a SQLite store file, so that the store is never left half-migrated.
///
/// - In-place steps only: all of them in one write transaction in the store.
/// - Otherwise: the steps run on files in a ``WorkFolder`` beside the store (same file
///   system), each streamed step into a new file, each in-place step in its input; the
///   last file is checkpointed, synced and renamed over the store in one atomic step.
///   The original is read but not written until then, and stays the backup: any failure
///   deletes the work folder and leaves the store byte for byte as it was.
struct SQLiteMigrationRun {
    let migrator: ProgressiveMigrator
    let plan: MigrationPlan
    let url: StoreURL
    let path: String

    var logger: Logger { migrator.logger }

    func run() async throws {
        let metadata = try await PersistentStore.metadata(at: url)
        try await checkpoint(path)
        if plan.steps.allSatisfy({ $0.strategy == .inPlace }) {
            try await runInPlace(on: path, steps: Array(plan.steps.enumerated()), uuid: metadata.storeUUID)
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
                    try FileManager.default.copyItem(atPath: path, toPath: copy)
                    current = copy
                }
                try await runInPlace(on: current, steps: group, uuid: metadata.storeUUID)
                continue
            }
            let output = workFolder.appendingPathComponent("step\(index + 1).sqlite").path
            if let setBased = step.setBased {
                try await runSetBased(setBased, step: step, index: index, from: current, to: output, uuid: metadata.storeUUID)
            } else {
                try await runStreamed(step, index: index, from: current, to: output, uuid: metadata.storeUUID)
            }
            if current != path { try? removeStoreFiles(current) }
            current = output
            index += 1
        }
        try checkCancellation()
        try replaceStore(with: current)
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

    private func runInPlace(on file: String, steps: [(offset: Int, element: MigrationPlan.Step)], uuid: String) async throws {
        let storeType = url.storeType
        let started = ContinuousClock.now
        let works = steps.map { (inPlace: $0.element.inPlace!, metadata: StoreMetadata(model: $0.element.destination, storeType: storeType, storeUUID: uuid)) }
        do {
            try await withDatabase(file) { database in
                try await database.write { connection in
                    for work in works { try work.inPlace.run(on: connection, metadata: work.metadata) }
                }
                try await database.checkpoint()
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(.store, "the in-place migration failed and was rolled back", hint: "the store was not changed", store: url.description, underlying: error)
        }
        for (offset, step) in steps {
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStep: "\(offset + 1)/\(plan.steps.count) \(step.source.name) → \(step.destination.name)",
                LoggingKeys.migrationStage: "\(MigrationProgress.Stage.inPlace.rawValue)",
                LoggingKeys.rows: "0",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
            migrator.report(MigrationProgress(
                fractionCompleted: 1, stepFractionCompleted: 1, step: 1, stepCount: 1, sourceVersion: step.source.name,
                destinationVersion: step.destination.name, stage: .inPlace), step: offset, of: plan.steps.count)
        }
    }

    private func runStreamed(_ step: MigrationPlan.Step, index: Int, from input: String, to output: String, uuid: String) async throws {
        let stepCount = plan.steps.count
        let migrator = self.migrator
        let passes = step.mappingModels.count
        for (pass, mapping) in step.mappingModels.enumerated() {
            let manager = step.managerType.init(configuration: MigrationManager.Configuration(
                sourceModel: step.source, destinationModel: step.destination, mappingModel: mapping,
                policies: migrator.chain.policies, logger: logger))
            manager.setProgressHandler { progress in
                guard let progress = Self.progress(progress, ofPass: pass, of: passes) else { return }
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
        let metadata = StoreMetadata(model: step.destination, storeType: url.storeType, storeUUID: uuid)
        try await withDatabase(output) { database in
            try await AssociationTable(database: database).drop()
            try await database.write { try StoreCreation.writeMetadata(metadata, on: $0) }
            try await database.checkpoint()
        }
    }

    private func runSetBased(_ setBased: SetBasedMigration, step: MigrationPlan.Step, index: Int, from input: String, to output: String, uuid: String) async throws {
        let stepCount = plan.steps.count
        func report(_ stage: MigrationProgress.Stage, _ fraction: Double, mapping: String? = nil, done: Int = 0) {
            migrator.report(MigrationProgress(
                fractionCompleted: fraction, stepFractionCompleted: fraction, step: 1, stepCount: 1, sourceVersion: step.source.name,
                destinationVersion: step.destination.name, stage: stage, entityMapping: mapping, instancesDone: done, instancesTotal: done),
                step: index, of: stepCount)
        }
        let started = ContinuousClock.now
        let created = try await PersistentStore.open(.sqlite(output), model: step.destination, options: .createIfMissing, logger: logger)
        await created.close()
        let source = SQLiteStoreFile.readOnlyURI(for: input)
        let metadata = StoreMetadata(model: step.destination, storeType: url.storeType, storeUUID: uuid)
        let written: [(mapping: String, rows: Int)]
        do {
            written = try await withDatabase(output) { database in
                _ = try await database.writeWithoutTransaction { try $0.run("ATTACH DATABASE ? AS src", [.text(source)]) }
                let written = try await database.write { connection in
                    let written = try setBased.run(on: connection)
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
        for (mapping, rows) in written {
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStep: "\(index + 1)/\(stepCount) \(step.source.name) → \(step.destination.name)",
                LoggingKeys.migrationStage: "\(MigrationProgress.Stage.createInstances.rawValue)",
                LoggingKeys.entityMapping: "\(mapping)", LoggingKeys.rows: "\(rows)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
            report(.createInstances, 0.5, mapping: mapping, done: rows)
        }
        // Stage 3 as in a streamed step: the new store against the model's rules.
        let store = try await PersistentStore.open(.sqlite(output), model: step.destination, options: .existingOnly, logger: logger)
        do {
            try await MigrationValidation(model: step.destination, batchSize: 1_000, logger: logger, file: step.mappingModels.first?.file)
                .validate(ManagedObjectContext(store: store, logger: logger)) { entity, _, done in report(.validateAndSave, 0.75, mapping: entity, done: done) }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        report(.finished, 1)
    }

    /// A mapping model's progress as part of its step: each of the step's mapping models
    /// takes an equal share, and only the last one finishes the step (`nil` for the end of
    /// an earlier one), so the step's fraction never goes back.
    static func progress(_ progress: MigrationProgress, ofPass pass: Int, of passes: Int) -> MigrationProgress? {
        guard passes > 1 else { return progress }
        if progress.stage == .finished, pass < passes - 1 { return nil }
        var share = progress
        share.stepFractionCompleted = (Double(pass) + progress.stepFractionCompleted) / Double(passes)
        share.fractionCompleted = share.stepFractionCompleted
        return share
    }

    /// Renames the finished file over the store: one atomic step on the same file system.
    private func replaceStore(with file: String) throws {
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
            // A WAL left beside the result would belong to no file after the rename.
            let size = (try? FileManager.default.attributesOfItem(atPath: file + suffix)[.size] as? Int) ?? 0
            if suffix == "-wal", size > 0 {
                throw MigrationError(.store, "the migrated store still has unwritten changes in its WAL", hint: "the store was not changed; run the migration again", store: url.description)
            }
            try? FileManager.default.removeItem(atPath: file + suffix)
        }
        try FileSystem.sync(file)
        // The original's WAL was checkpointed and its connections are closed; stale WAL or
        // shared-memory files must not be applied to the new file.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileSystem.rename(file, to: path)
        try FileSystem.sync(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    private func removeStoreFiles(_ file: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
    }
}
