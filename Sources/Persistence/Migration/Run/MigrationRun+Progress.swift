import Logging

/// What a step says of itself: its stage, its own fraction done, the rows of the subject.
/// ``ProgressiveMigrator`` places it in the whole migration (``MigrationProgress``).
struct StepReport: Sendable {
    var stage: MigrationProgress.Stage
    /// The step's own fraction done, 0…1.
    var fraction: Double
    var subject: MigrationProgress.Subject?
    var done: Int
    var total: Int

    init(stage: MigrationProgress.Stage, fraction: Double, subject: MigrationProgress.Subject? = nil, done: Int = 0, total: Int? = nil) {
        self.stage = stage
        self.fraction = fraction
        self.subject = subject
        self.done = done
        self.total = total ?? done
    }

    /// What a step's migration manager reported of its step.
    init(_ progress: MigrationProgress) {
        self.init(
            stage: progress.stage,
            fraction: progress.stepFractionCompleted,
            subject: progress.subject,
            done: progress.instancesDone,
            total: progress.instancesTotal
        )
    }
}

extension MigrationRun {
    /// Reports what step `index` says of itself as part of the whole plan, to the
    /// migrator's subscribers and this run's handler; `start` is where the step (or its
    /// group of in-place steps) began.
    func report(_ index: Int, since start: MigrationWorkload.Start, _ report: StepReport) {
        let progress = migrator.report(report, step: index, of: plan, workload: workload, since: start)
        onProgress?(progress)
    }

    func report(
        _ index: Int,
        since start: MigrationWorkload.Start,
        stage: MigrationProgress.Stage,
        fraction: Double,
        subject: MigrationProgress.Subject? = nil,
        done: Int = 0,
        total: Int? = nil
    ) {
        report(index, since: start, StepReport(stage: stage, fraction: fraction, subject: subject, done: done, total: total))
    }

    /// What every engine does once a set-based step's inserts are in: log and report the
    /// rows per entity mapping (half the step), then validate the new store (stage 3, as a
    /// streamed step does; the other half, entity by entity) and report the step finished.
    func completeSetBasedStep(
        _ index: Int,
        written: [(mapping: String, rows: Int)],
        since started: ContinuousClock.Instant,
        destination: StoreURL
    ) async throws {
        let step = plan.steps[index]
        let start = workload.start(ofStep: index, at: started)
        let stepCount = plan.steps.count
        for (mapping, rows) in written {
            logger.info(
                "migration stage",
                metadata: [
                    LoggingKeys.migrationStep: "\(index + 1)/\(stepCount) \(step.source.name) → \(step.destination.name)",
                    LoggingKeys.migrationStage: "\(MigrationProgress.Stage.createInstances.rawValue)",
                    LoggingKeys.entityMapping: "\(mapping)", LoggingKeys.rows: "\(rows)",
                    LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
                ]
            )
            report(index, since: start, stage: .createInstances, fraction: 0.5, subject: .entityMapping(mapping), done: rows)
        }
        let rowsWritten = max(written.map(\.rows).reduce(0, +), 1)
        var validated = 0
        try await MigrationValidation(
            model: step.destination,
            batchSize: migrator.batchSize,
            logger: migrator.logger(forStep: index, of: stepCount, step),
            file: step.mappingModels.first?.file
        )
        .validate(storeAt: destination) { entity, rows in
            validated += rows
            let fraction = 0.5 + 0.5 * min(1, Double(validated) / Double(rowsWritten))
            report(index, since: start, stage: .validateAndSave, fraction: min(fraction, 0.99), subject: .entity(entity), done: rows)
        }
        report(index, since: start, stage: .finished, fraction: 1)
    }
}
