import Foundation

/// What an HTTP benchmark measured on one backend, printed as a table and as one JSON line
/// (`"benchmark": "http"`).
struct HTTPBenchmarkResult: Encodable {
    /// One request, loaded on the service and on the bare handler.
    struct Request: Encodable {
        var request: String
        var serviceRequestsPerSecond: Double
        var bareRequestsPerSecond: Double
        /// The service's requests/s over the bare handler's: 1 is no overhead.
        var ratio: Double
        var serviceP99Milliseconds: Double
        var bareP99Milliseconds: Double
        var serviceP50Milliseconds: Double
        var bareP50Milliseconds: Double
        /// Non-2xx answers and socket errors, which should be none.
        var serviceErrors: Int
        var bareErrors: Int

        init(request: String, service: WrkReport, bare: WrkReport) {
            self.request = request
            serviceRequestsPerSecond = service.requestsPerSecond
            bareRequestsPerSecond = bare.requestsPerSecond
            ratio = (service.requestsPerSecond / max(bare.requestsPerSecond, 1e-9)).rounded(places: 2)
            serviceP99Milliseconds = service.p99Milliseconds
            bareP99Milliseconds = bare.p99Milliseconds
            serviceP50Milliseconds = service.p50Milliseconds
            bareP50Milliseconds = bare.p50Milliseconds
            serviceErrors = service.errors
            bareErrors = bare.errors
        }
    }

    var benchmark = "http"
    var backend: String
    var books: Int
    var connections: Int
    var threads: Int
    var durationSeconds: Int
    var requests: [Request]

    init(backend: String, books: Int, load: WrkRunner, requests: [Request]) {
        self.backend = backend
        self.books = books
        connections = load.connections
        threads = load.threads
        durationSeconds = load.duration
        self.requests = requests
    }

    func printReport() {
        func milliseconds(_ value: Double) -> String { String(format: "%9.2f ms", value) }
        print("\nThe service against a bare handler on \(backend): \(books) books, wrk -t\(threads) -c\(connections) -d\(durationSeconds)s")
        print("request                                  service req/s  bare req/s   ratio  service p99     bare p99")
        for request in requests {
            let name = request.request.padding(toLength: 40, withPad: " ", startingAt: 0)
            print("\(name) \(String(format: "%13.0f %11.0f %6.2f×", request.serviceRequestsPerSecond, request.bareRequestsPerSecond, request.ratio)) \(milliseconds(request.serviceP99Milliseconds)) \(milliseconds(request.bareP99Milliseconds))")
        }
        for request in requests where request.serviceErrors + request.bareErrors > 0 {
            print("ERRORS on \(request.request): \(request.serviceErrors) from the service, \(request.bareErrors) from the bare handler (non-2xx answers and socket errors)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(self), let line = String(data: data, encoding: .utf8) { print(line) }
    }
}
