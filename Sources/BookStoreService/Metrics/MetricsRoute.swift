import Hummingbird
import NIOCore

/// `GET /metrics`: every metric of the service in Prometheus' text format (0.0.4). The
/// store's gauges are read off the gate as the scrape asks for them.
struct MetricsRoute: Sendable {
    let gate: StoreGate
    let metrics: ServiceMetrics
    let gauges: PublishedGauges

    init(gate: StoreGate, metrics: ServiceMetrics) {
        self.gate = gate
        self.metrics = metrics
        self.gauges = PublishedGauges(registry: metrics.registry)
    }

    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The route, relative to the root.
    var endpoints: RouteCollection<BookStoreRequestContext> {
        RouteCollection(context: BookStoreRequestContext.self)
            .get("metrics") { _, _ in
                gauges.publish(gate.metricSamples())
                let text = metrics.registry.emitToBuffer()
                return Response(status: .ok, headers: [.contentType: Self.contentType], body: .init(byteBuffer: ByteBuffer(bytes: text)))
            }
    }
}
