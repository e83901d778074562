import CoreMetrics
import Prometheus

/// The service's metrics, served at `GET /metrics` in Prometheus' text format: requests
/// by route, method and status with their durations (through swift-metrics, with the
/// labels of Hummingbird's `MetricsMiddleware`), the store's state and connections, and a
/// migration's step, stage, fraction done, rows per second and time left.
///
/// The store's figures are read when `/metrics` is asked for, never on the way of a
/// request. The request metrics go through swift-metrics, which the process bootstraps
/// once, with ``factory``, so that they land in ``registry``; a library never does it.
///
/// ```swift
/// let metrics = ServiceMetrics()
/// MetricsSystem.bootstrap(metrics.factory)
/// var configuration = ServiceConfiguration(store: store, models: models)
/// configuration.metrics = metrics
/// ```
public struct ServiceMetrics: Sendable {
    /// What `/metrics` emits.
    public let registry: PrometheusCollectorRegistry

    /// Metrics kept in `registry` (a new one by default).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// The swift-metrics factory writing into ``registry``: request durations in buckets
    /// from half a millisecond (most requests take under one) to ten seconds, and the
    /// request metrics named as Prometheus' conventions have them (a counter ends in
    /// `_total`, a duration in `_seconds`).
    public var factory: PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Looked up by the name the sanitizer gives.
        factory.durationHistogramBuckets[Self.prometheusNames[Self.requestDurationLabel]!] = Self.requestDurationBuckets
        factory.nameAndLabelSanitizer = { name, labels in (Self.prometheusNames[name] ?? name, labels) }
        return factory
    }

    /// The label of the request timer.
    static let requestDurationLabel = "http.server.request.duration"

    /// The request metrics' swift-metrics labels and the names `/metrics` gives them (the
    /// others only have their dots made underscores: `http_server_active_requests`).
    static let prometheusNames = [
        "http.server.requests": "http_server_requests_total",
        requestDurationLabel: "http_server_request_duration_seconds",
    ]

    static let requestDurationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10),
    ]
}
