import Logging
import Persistence
import Synchronization

/// Keeps the framework's instance-stage log lines (`migration stage`, stage `create
/// instances`) with where each spent its time (``LoggingKeys/readMilliseconds`` …), and
/// passes every line at the benchmark's level on to its logger: where a migration's time
/// goes, per mapping of each step, from the framework's own measurements.
final class StagePartsRecorder: Sendable {
    /// One mapping's instance stage in one step.
    struct Stage: Encodable, Sendable {
        var step: String
        var mapping: String
        var rows: Int
        var milliseconds: Double
        var readMilliseconds: Double
        var hooksMilliseconds: Double
        var prepareMilliseconds: Double
        var writeMilliseconds: Double
    }

    private let stages = Mutex<[Stage]>([])

    /// The stages recorded so far, in the order they ended.
    var recorded: [Stage] { stages.withLock { $0 } }

    /// A logger for the framework that records stage lines here and forwards the lines
    /// `forwarding` would log to it.
    func logger(forwardingTo forwarding: Logger) -> Logger {
        var logger = Logger(label: forwarding.label) { _ in Handler(recorder: self, forwarding: forwarding) }
        // Info: the stage lines; lower levels than the benchmark's are not forwarded.
        logger.logLevel = min(.info, forwarding.logLevel)
        return logger
    }

    private struct Handler: LogHandler {
        let recorder: StagePartsRecorder
        let forwarding: Logger
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            if event.message.description == "migration stage", all[LoggingKeys.migrationStage]?.description == "create instances",
                let read = Self.number(all[LoggingKeys.readMilliseconds])
            {
                let stage = Stage(
                    step: all[LoggingKeys.migrationStep]?.description ?? "",
                    mapping: all[LoggingKeys.entityMapping]?.description ?? "",
                    rows: Int(all[LoggingKeys.rows]?.description ?? "") ?? 0,
                    milliseconds: Self.number(all[LoggingKeys.durationMilliseconds]) ?? 0,
                    readMilliseconds: read,
                    hooksMilliseconds: Self.number(all[LoggingKeys.hooksMilliseconds]) ?? 0,
                    prepareMilliseconds: Self.number(all[LoggingKeys.prepareMilliseconds]) ?? 0,
                    writeMilliseconds: Self.number(all[LoggingKeys.writeMilliseconds]) ?? 0
                )
                recorder.stages.withLock { $0.append(stage) }
            }
            if event.level >= forwarding.logLevel {
                forwarding.log(
                    level: event.level,
                    event.message,
                    metadata: all,
                    source: event.source,
                    file: event.file,
                    function: event.function,
                    line: event.line
                )
            }
        }

        private static func number(_ value: Logger.Metadata.Value?) -> Double? {
            value.flatMap { Double($0.description) }
        }
    }
}
