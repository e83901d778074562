import Logging
import Synchronization

/// Keeps every log line's message and metadata, so a test can look for one, or wait for a
/// process to reach a point it logs (`await log.waitFor { … }`) instead of sleeping.
///
/// ```swift
/// let log = LogRecorder()
/// try await ProgressiveMigrator(chain: chain, logger: log.logger).migrateStore(at: url)
/// #expect(log.all.contains { $0.contains("fused_steps=3+4") })
/// ```
public final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    /// A recorder with no lines yet; log into it through ``logger``.
    public init() {}

    /// A logger at `trace` that records here: `<level> <message> key=value …`.
    public var logger: Logger {
        var logger = Logger(label: "recorded") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }

    /// Polls until a line satisfies `predicate`; fails after `timeout` with what was logged.
    /// Five minutes by default: a busy machine running tests side by side can take that long
    /// to get a process to where it logs.
    public func waitFor(_ what: String, timeout: Duration = .seconds(300), _ predicate: (String) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !all.contains(where: predicate) {
            guard ContinuousClock.now < deadline else {
                throw Timeout(description: "no log line \(what) within \(timeout); logged:\n\(all.suffix(20).joined(separator: "\n"))")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What ``waitFor(_:timeout:_:)`` throws when no line came.
    public struct Timeout: Error, CustomStringConvertible {
        /// What was awaited, the time waited, and the last lines logged.
        public let description: String
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = self.metadata.merging(event.metadata ?? [:]) { $1 }
            let text = "\(event.level) \(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            recorder.lines.withLock { $0.append(text) }
        }
    }
}
