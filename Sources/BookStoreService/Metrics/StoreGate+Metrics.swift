import Persistence

extension StoreGate {
    /// The store's gauges as they stand now: its state; while it is served, its
    /// connections; while it is migrated, the migration's progress.
    func metricSamples(now: ContinuousClock.Instant = .now) -> [GaugeSample] {
        let phase = self.phase
        var samples = StoreState.allCases.map { state in
            GaugeSample("bookstore_store_state", state == StoreState(phase) ? 1 : 0, labels: [("state", state.rawValue)])
        }
        switch phase {
        case .ready(let container):
            let usage = container.store.database.connectionUsage
            for (role, counts) in [("reader", usage.readers), ("writer", usage.writer)] {
                samples += [
                    GaugeSample("bookstore_store_connections_open", counts.open, labels: [("role", role)]),
                    GaugeSample("bookstore_store_connections_in_use", counts.inUse, labels: [("role", role)]),
                    GaugeSample("bookstore_store_connections_waiting", counts.waiting, labels: [("role", role)]),
                ]
            }
        case .migrating(let report):
            samples += Self.migrationSamples(report, now: now)
        case .starting, .waitingForMigration, .outdated, .stopped:
            break
        }
        return samples
    }

    static func migrationSamples(_ report: MigrationReport, now: ContinuousClock.Instant) -> [GaugeSample] {
        let progress = report.progress(at: now)
        var samples = [
            GaugeSample("bookstore_migration_info", 1, labels: [("source", progress.sourceVersion), ("destination", progress.destinationVersion)]),
            GaugeSample("bookstore_migration_step", progress.step),
            GaugeSample("bookstore_migration_steps", progress.stepCount),
            GaugeSample("bookstore_migration_fraction_completed", progress.fractionCompleted),
            GaugeSample("bookstore_migration_step_fraction_completed", progress.stepFractionCompleted),
            GaugeSample("bookstore_migration_rows_done", progress.instancesDone),
            GaugeSample("bookstore_migration_rows_total", progress.instancesTotal),
            GaugeSample("bookstore_migration_elapsed_seconds", progress.elapsed.seconds),
        ]
        samples += MigrationProgress.Stage.allCases.map { stage in
            GaugeSample("bookstore_migration_stage", stage == progress.stage ? 1 : 0, labels: [("stage", stage.metricLabel)])
        }
        // Absent until known, rather than a number that means "not yet".
        if let rate = report.rowsPerSecond { samples.append(GaugeSample("bookstore_migration_rows_per_second", rate)) }
        if let left = progress.estimatedTimeRemaining { samples.append(GaugeSample("bookstore_migration_remaining_seconds", left.seconds)) }
        return samples
    }

    /// The gate's phases as `bookstore_store_state` labels them.
    enum StoreState: String, CaseIterable {
        case starting, migrating
        case waitingForMigration = "waiting_for_migration"
        case ready, outdated, stopped

        init(_ phase: Phase) {
            self =
                switch phase {
                case .starting: .starting
                case .migrating: .migrating
                case .waitingForMigration: .waitingForMigration
                case .ready: .ready
                case .outdated: .outdated
                case .stopped: .stopped
                }
        }
    }
}

extension MigrationProgress.Stage {
    /// The stage as a label value: `create_instances`.
    var metricLabel: String { rawValue.replacingOccurrences(of: " ", with: "_") }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
