import Logging

/// Stage 3 of a step: every destination object against the destination model's rules,
/// read in primary-key batches so memory stays flat.
struct MigrationValidation {
    let model: ManagedObjectModel
    let batchSize: Int
    let logger: Logger
    let file: String?

    /// Validates every object in `context`'s store; `progress` gets (entity, batch count, done).
    ///
    /// - Throws: ``MigrationError/Code/validationFailed`` with the first problems found
    ///   (up to 100 are collected), the whole list in a ``ValidationError``.
    func validate(_ context: ManagedObjectContext, progress: (String, Int, Int) -> Void) async throws {
        var issues: [ValidationError.Issue] = []
        for entity in model.entities where !entity.isAbstract {
            let started = ContinuousClock.now
            var last: Int64 = 0
            var done = 0
            while issues.count < 100 {
                if Task.isCancelled {
                    throw MigrationError(.cancelled, "the migration was cancelled", hint: "the source store was not changed; run the migration again")
                }
                let batch = try await context.fetchBatch(entityName: entity.name, predicate: nil, after: last, limit: batchSize)
                guard let end = batch.last?.objectID.primaryKey else { break }
                for object in batch { issues += ManagedObjectContext.validate(object) }
                context.reset()
                last = end
                done += batch.count
                progress(entity.name, batch.count, done)
            }
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStage: "\(MigrationProgress.Stage.validateAndSave.rawValue)",
                LoggingKeys.entity: "\(entity.name)", LoggingKeys.rows: "\(done)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
        }
        if !issues.isEmpty {
            // Which objects and rules, never the values: those are the users' data.
            let shown = issues.prefix(5).map { "\($0.objectID) \($0.key ?? "?"): \($0.code)" }.joined(separator: "; ")
            throw MigrationError(
                .validationFailed, "the migrated objects break the rules of '\(model.name)': \(shown)\(issues.count > 5 ? " …" : "")",
                hint: "fix the mapping model's value expressions or the policy so every object is valid; the source store was not changed",
                file: file, underlying: ValidationError(issues: issues))
        }
    }
}
