import Prometheus
import Synchronization

/// One gauge's value as of a scrape: its name, labels and value.
struct GaugeSample: Sendable, Equatable {
    let name: String
    let labels: [Label]
    let value: Double

    struct Label: Sendable, Hashable {
        let name: String
        let value: String
    }

    init(_ name: String, _ value: Double, labels: [(String, String)] = []) {
        self.name = name
        self.labels = labels.map { Label(name: $0.0, value: $0.1) }
        self.value = value
    }

    init(_ name: String, _ value: Int, labels: [(String, String)] = []) {
        self.init(name, Double(value), labels: labels)
    }

    var key: Key { Key(name: name, labels: labels) }

    struct Key: Hashable {
        let name: String
        let labels: [Label]
    }
}

/// The gauges a scrape reads off the service, kept in a registry: each scrape's samples
/// set theirs, and a gauge the last scrape had and this one has not is taken out, so that
/// `/metrics` shows a migration's figures only while one runs.
final class PublishedGauges: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let published = Mutex<[GaugeSample.Key: Gauge]>([:])

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func publish(_ samples: [GaugeSample]) {
        published.withLock { published in
            var current: [GaugeSample.Key: Gauge] = [:]
            for sample in samples {
                let gauge =
                    published[sample.key]
                    ?? registry.makeGauge(
                        // The whole name as the metric's: it carries its unit already.
                        descriptor: MetricNameDescriptor(metricName: sample.name, unitName: "", helpText: Self.help[sample.name] ?? ""),
                        labels: sample.labels.map { ($0.name, $0.value) }
                    )
                gauge.set(sample.value)
                current[sample.key] = gauge
            }
            for (key, gauge) in published where current[key] == nil {
                registry.unregisterGauge(gauge)
            }
            published = current
        }
    }

    /// What each gauge means, on its `# HELP` line.
    static let help: [String: String] = [
        "bookstore_store_state":
            "1 for the state the store is in (starting, migrating, waiting_for_migration, ready, outdated, stopped), 0 for the others",
        "bookstore_store_connections_open": "Store connections open, by role (reader, writer)",
        "bookstore_store_connections_in_use": "Store connections running a request's work, by role",
        "bookstore_store_connections_waiting": "Callers waiting for a store connection, by role",
        "bookstore_migration_info": "1 while a migration runs, labelled with its current step's source and destination model versions",
        "bookstore_migration_step": "The migration's current step, counted from 1",
        "bookstore_migration_steps": "The migration's number of steps",
        "bookstore_migration_stage": "1 for the stage the migration's current step is at, 0 for the others",
        "bookstore_migration_fraction_completed": "The whole migration's fraction done, 0 to 1",
        "bookstore_migration_step_fraction_completed": "The current step's fraction done, 0 to 1",
        "bookstore_migration_rows_done": "Rows of the current stage's entity or mapping done",
        "bookstore_migration_rows_total": "Rows of the current stage's entity or mapping",
        "bookstore_migration_rows_per_second": "Rows a second in the current stage, since its first report",
        "bookstore_migration_elapsed_seconds": "Seconds since the migration was planned",
        "bookstore_migration_remaining_seconds": "Seconds the rest should take at the current step's rate",
    ]
}
