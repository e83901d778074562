import Foundation

/// What an HTTP benchmark measured on one backend, printed as a table and as one JSON line
/// (`"benchmark": "http"`).
struct HTTPBenchmarkResult: Encodable {
    /// Every round's wrk reports, by request, as ``HTTPBenchmark`` took them.
    struct Measured: Sendable {
        private(set) var rounds: [WrkRunner.Target: [(service: WrkReport, bare: WrkReport)]] = [:]

        mutating func add(_ target: WrkRunner.Target, service: WrkReport, bare: WrkReport) {
            rounds[target, default: []].append((service, bare))
        }
    }

    /// One request, loaded on the service and on the bare handler: the median round of each
    /// by requests/s, with its latencies; the ratio is the median of the rounds' own.
    struct Request: Encodable {
        var request: String
        var serviceRequestsPerSecond: Double
        var bareRequestsPerSecond: Double
        /// The median of the rounds' service requests/s over their bare handler's: 1 is no
        /// overhead.
        var ratio: Double
        var serviceP99Milliseconds: Double
        var bareP99Milliseconds: Double
        var serviceP50Milliseconds: Double
        var bareP50Milliseconds: Double
        /// Non-2xx answers and socket errors in all rounds, which should be none.
        var serviceErrors: Int
        var bareErrors: Int
        /// Every round's requests/s, in the order they ran.
        var serviceRounds: [Double]
        var bareRounds: [Double]

        init(request: String, rounds: [(service: WrkReport, bare: WrkReport)]) {
            let service = Self.median(rounds.map(\.service))
            let bare = Self.median(rounds.map(\.bare))
            self.request = request
            serviceRequestsPerSecond = service.requestsPerSecond
            bareRequestsPerSecond = bare.requestsPerSecond
            ratio = HTTPBenchmarkResult.median(rounds.map { $0.service.requestsPerSecond / max($0.bare.requestsPerSecond, 1e-9) })
            serviceP99Milliseconds = service.p99Milliseconds
            bareP99Milliseconds = bare.p99Milliseconds
            serviceP50Milliseconds = service.p50Milliseconds
            bareP50Milliseconds = bare.p50Milliseconds
            serviceErrors = rounds.map(\.service.errors).reduce(0, +)
            bareErrors = rounds.map(\.bare.errors).reduce(0, +)
            serviceRounds = rounds.map(\.service.requestsPerSecond)
            bareRounds = rounds.map(\.bare.requestsPerSecond)
        }

        /// The report whose requests/s is the median: a round that ran (the lower middle of
        /// an even count).
        static func median(_ reports: [WrkReport]) -> WrkReport {
            reports.sorted { $0.requestsPerSecond < $1.requestsPerSecond }[(reports.count - 1) / 2]
        }
    }

    /// How many times longer a keyset page of twenty takes than one publication, on each
    /// server: the median of the rounds' ratios (a round measures the two on a server with
    /// one run on the other server between them).
    struct PageAgainstOne: Encodable {
        var service: Double
        var bare: Double

        init?(_ measured: Measured) {
            guard let one = measured.rounds[.publication], let page = measured.rounds[.keyset], one.count == page.count, !one.isEmpty else {
                return nil
            }
            service = HTTPBenchmarkResult.median(zip(one, page).map { $0.service.requestsPerSecond / max($1.service.requestsPerSecond, 1e-9) })
            bare = HTTPBenchmarkResult.median(zip(one, page).map { $0.bare.requestsPerSecond / max($1.bare.requestsPerSecond, 1e-9) })
        }
    }

    /// The median of ratios, to two places: the mean of the middle two of an even count.
    static func median(_ ratios: [Double]) -> Double {
        let sorted = ratios.sorted()
        let middle = sorted.count / 2
        let value = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return value.rounded(places: 2)
    }

    var benchmark = "http"
    var backend: String
    var books: Int
    /// Whether the service recorded request metrics and served /metrics.
    var metrics: Bool
    var connections: Int
    var threads: Int
    var durationSeconds: Int
    var rounds: Int
    var requests: [Request]
    var keysetPageAgainstOnePublication: PageAgainstOne?

    init(backend: String, books: Int, metrics: Bool, load: WrkRunner, measured: Measured) {
        self.backend = backend
        self.books = books
        self.metrics = metrics
        connections = load.connections
        threads = load.threads
        durationSeconds = load.duration
        rounds = load.rounds
        requests = WrkRunner.Target.allCases.compactMap { target in
            measured.rounds[target].map { Request(request: target.rawValue, rounds: $0) }
        }
        keysetPageAgainstOnePublication = PageAgainstOne(measured)
    }

    func printReport() {
        func milliseconds(_ value: Double) -> String { String(format: "%9.2f ms", value) }
        print(
            "\nThe service (metrics \(metrics ? "on" : "off")) against a bare handler on \(backend): \(books) books, wrk -t\(threads) -c\(connections) -d\(durationSeconds)s, median of \(rounds) round\(rounds == 1 ? "" : "s")"
        )
        print("request                                  service req/s  bare req/s   ratio  service p99     bare p99")
        for request in requests {
            let name = request.request.padding(toLength: 40, withPad: " ", startingAt: 0)
            print(
                "\(name) \(String(format: "%13.0f %11.0f %6.2f×", request.serviceRequestsPerSecond, request.bareRequestsPerSecond, request.ratio)) \(milliseconds(request.serviceP99Milliseconds)) \(milliseconds(request.bareP99Milliseconds))"
            )
        }
        if let page = keysetPageAgainstOnePublication {
            print(
                "A keyset page of 20 against one publication (the median of the rounds' ratios of requests/s): service \(String(format: "%.2f", page.service))×, bare \(String(format: "%.2f", page.bare))×"
            )
        }
        for request in requests where request.serviceErrors + request.bareErrors > 0 {
            print(
                "ERRORS on \(request.request): \(request.serviceErrors) from the service, \(request.bareErrors) from the bare handler (non-2xx answers and socket errors)"
            )
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(self), let line = String(data: data, encoding: .utf8) { print(line) }
    }
}
