import Logging

extension ProgressiveMigrator {
    /// Reports progress of step `index` of `stepCount` from a stage of it.
    func reportStep(_ step: MigrationPlan.Step, index: Int, of stepCount: Int, stage: MigrationProgress.Stage, fraction: Double,
                    mapping: String? = nil, done: Int = 0) {
        report(MigrationProgress(
            fractionCompleted: fraction, stepFractionCompleted: fraction, step: 1, stepCount: 1, sourceVersion: step.source.name,
            destinationVersion: step.destination.name, stage: stage, entityMapping: mapping, instancesDone: done, instancesTotal: done),
            step: index, of: stepCount)
    }

    /// What every engine does once a set-based step's inserts are in: log and report the
    /// rows per entity mapping, then validate the new store (stage 3, as a streamed step
    /// does) and report the step finished.
    func completeSetBasedStep(_ step: MigrationPlan.Step, index: Int, of stepCount: Int, written: [(mapping: String, rows: Int)],
                              since started: ContinuousClock.Instant, destination: StoreURL) async throws {
        for (mapping, rows) in written {
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStep: "\(index + 1)/\(stepCount) \(step.source.name) → \(step.destination.name)",
                LoggingKeys.migrationStage: "\(MigrationProgress.Stage.createInstances.rawValue)",
                LoggingKeys.entityMapping: "\(mapping)", LoggingKeys.rows: "\(rows)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
            reportStep(step, index: index, of: stepCount, stage: .createInstances, fraction: 0.5, mapping: mapping, done: rows)
        }
        try await MigrationValidation(model: step.destination, batchSize: batchSize, logger: self.logger(forStep: index, of: stepCount, step),
                                      file: step.mappingModels.first?.file)
            .validate(storeAt: destination) { entity, _, done in
                reportStep(step, index: index, of: stepCount, stage: .validateAndSave, fraction: 0.75, mapping: entity, done: done)
            }
        reportStep(step, index: index, of: stepCount, stage: .finished, fraction: 1)
    }
}
