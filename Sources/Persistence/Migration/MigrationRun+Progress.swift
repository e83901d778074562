import Logging

extension MigrationRun {
    /// Reports a stage of step `index` as part of the whole plan: `fraction` is the step's
    /// own; `start` is where the step (or its group of in-place steps) began.
    func report(_ index: Int, since start: MigrationWorkload.Start, stage: MigrationProgress.Stage, fraction: Double,
                subject: MigrationProgress.Subject? = nil, done: Int = 0, total: Int? = nil) {
        let step = plan.steps[index]
        migrator.report(MigrationProgress(
            fractionCompleted: fraction, stepFractionCompleted: fraction, step: 1, stepCount: 1, sourceVersion: step.source.name,
            destinationVersion: step.destination.name, stage: stage, subject: subject, instancesDone: done, instancesTotal: total ?? done),
            step: index, of: plan.steps.count, workload: workload, since: start)
    }

    /// What every engine does once a set-based step's inserts are in: log and report the
    /// rows per entity mapping (half the step), then validate the new store (stage 3, as a
    /// streamed step does; the other half, entity by entity) and report the step finished.
    func completeSetBasedStep(_ index: Int, written: [(mapping: String, rows: Int)], since started: ContinuousClock.Instant,
                              destination: StoreURL) async throws {
        let step = plan.steps[index]
        let start = workload.start(ofStep: index, at: started)
        let stepCount = plan.steps.count
        for (mapping, rows) in written {
            logger.info("migration stage", metadata: [
                LoggingKeys.migrationStep: "\(index + 1)/\(stepCount) \(step.source.name) → \(step.destination.name)",
                LoggingKeys.migrationStage: "\(MigrationProgress.Stage.createInstances.rawValue)",
                LoggingKeys.entityMapping: "\(mapping)", LoggingKeys.rows: "\(rows)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ])
            report(index, since: start, stage: .createInstances, fraction: 0.5, subject: .entityMapping(mapping), done: rows)
        }
        let rowsWritten = max(written.map(\.rows).reduce(0, +), 1)
        var validated = 0
        try await MigrationValidation(model: step.destination, batchSize: migrator.batchSize,
                                      logger: migrator.logger(forStep: index, of: stepCount, step), file: step.mappingModels.first?.file)
            .validate(storeAt: destination) { entity, rows in
                validated += rows
                let fraction = 0.5 + 0.5 * min(1, Double(validated) / Double(rowsWritten))
                report(index, since: start, stage: .validateAndSave, fraction: min(fraction, 0.99), subject: .entity(entity), done: rows)
            }
        report(index, since: start, stage: .finished, fraction: 1)
    }
}
