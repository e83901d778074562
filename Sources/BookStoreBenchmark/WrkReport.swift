import Foundation

/// What one wrk run measured, read from its `--latency` output:
///
/// ```
///   Latency Distribution
///      50%  635.91us
///      99%   10.64ms
///   181262 requests in 10.00s, 58.79MB read
///   Non-2xx or 3xx responses: 3
///   Socket errors: connect 0, read 0, write 0, timeout 12
/// Requests/sec:  18120.31
/// ```
struct WrkReport: Sendable, Encodable {
    var requests: Int
    var requestsPerSecond: Double
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    /// Responses that were not 2xx or 3xx, and socket errors (connect, read, write, timeout):
    /// a run with errors measured something else than the answers it should have.
    var errors: Int

    init(parsing output: String) throws {
        var requests: Int?
        var perSecond: Double?
        var percentiles: [String: Double] = [:]
        var errors = 0
        var inDistribution = false
        for line in output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if line.hasPrefix("Latency Distribution") {
                inDistribution = true
            } else if inDistribution, fields.count == 2, fields[0].hasSuffix("%") {
                percentiles[String(fields[0])] = Self.milliseconds(fields[1])
            } else {
                inDistribution = false
            }
            if line.hasPrefix("Requests/sec:"), fields.count == 2 {
                perSecond = Double(fields[1])
            } else if line.contains(" requests in "), let first = fields.first {
                requests = Int(first)
            } else if line.hasPrefix("Non-2xx or 3xx responses:"), let last = fields.last {
                errors += Int(last) ?? 0
            } else if line.hasPrefix("Socket errors:") {
                // "connect 0, read 0, write 0, timeout 12"
                errors += fields.dropFirst(2).compactMap { Int($0.trimmingCharacters(in: .punctuationCharacters)) }.reduce(0, +)
            }
        }
        guard let requests, let perSecond, let p50 = percentiles["50%"], let p99 = percentiles["99%"] else {
            throw HTTPBenchmark.Failure("wrk's output has no requests/s or latency distribution:\n\(output)")
        }
        self.requests = requests
        requestsPerSecond = perSecond.rounded(places: 1)
        p50Milliseconds = p50.rounded(places: 3)
        p99Milliseconds = p99.rounded(places: 3)
        self.errors = errors
    }

    /// wrk's durations: a number and a unit, `us`, `ms`, `s`, `m` or `h`.
    static func milliseconds(_ text: some StringProtocol) -> Double? {
        let unit = text.drop { $0.isNumber || $0 == "." }
        guard let value = Double(text.dropLast(unit.count)) else { return nil }
        switch unit {
        case "us": return value / 1_000
        case "ms": return value
        case "s": return value * 1_000
        case "m": return value * 60_000
        case "h": return value * 3_600_000
        default: return nil
        }
    }
}
