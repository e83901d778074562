import ArgumentParser
import Foundation
import Logging
import Persistence
import Synchronization
import UnixSignals

/// `bookstore-benchmark write`: a process of an earlier release writing its store at a
/// steady rate (``PreviousReleaseWriter``) until SIGTERM or SIGINT, for the online
/// migration's benchmark and tests. One line per acknowledged write on standard output
/// (`ok 12 update-publication 3.1`: the write, what it did, its milliseconds), one per
/// failed one (`error 13: …`), and a summary when it stops.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a store through the framework at an earlier model version, at a steady rate, until SIGTERM.",
        discussion: "Stops by itself, with exit status 3, when told the store was migrated to another version since it opened it."
    )

    @Option(name: .long, help: ArgumentHelp("The store URL.", valueName: "url"))
    var store: String

    @Option(name: .long, help: ArgumentHelp("The model version the writer runs (1–5).", valueName: "number"))
    var modelVersion: Int

    @Option(name: .long, help: ArgumentHelp("Writes per second; 0 writes as fast as it can.", valueName: "count"))
    var rate: Double = 200

    @Option(name: .long, help: ArgumentHelp("The seed of the writes chosen.", valueName: "number"))
    var seed: UInt64 = 1

    @Option(name: .long, help: ArgumentHelp("The framework's log level.", valueName: "level"))
    var logLevel: Logger.Level = .warning

    func run() async throws {
        let logger = Logger.benchmark(level: logLevel)
        let writer = try await PreviousReleaseWriter(url: try StoreURL(store), version: modelVersion, seed: seed, logger: logger)
        let stop = StopFlag()
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let told = try await withThrowingTaskGroup(of: Bool?.self) { group in
            group.addTask {
                for await _ in signals {
                    stop.raise()
                    return nil
                }
                return nil
            }
            group.addTask { try await writeUntilStopped(writer, stop: stop) }
            var told = false
            while let result = try await group.next() {
                if let result {
                    told = result
                    group.cancelAll()
                }
            }
            return told
        }
        await writer.close()
        if told { throw ExitCode(3) }
    }

    /// Writes until `stop`; returns whether the writer was told the store was migrated.
    private func writeUntilStopped(_ writer: PreviousReleaseWriter, stop: StopFlag) async throws -> Bool {
        say("ready")
        let started = ContinuousClock.now
        var (acknowledged, failed, sequence) = (0, 0, 0)
        var longestWrite = Duration.zero
        var longestGap = Duration.zero
        var lastAcknowledged = started
        var told = false
        while !stop.isRaised {
            sequence += 1
            if rate > 0 {
                let due = started + .seconds(Double(sequence) / rate)
                if due > .now { try? await Task.sleep(until: due) }
            }
            let began = ContinuousClock.now
            do {
                guard let operation = try await writer.write(sequence) else { continue }
                let now = ContinuousClock.now
                acknowledged += 1
                longestWrite = max(longestWrite, now - began)
                longestGap = max(longestGap, now - lastAcknowledged)
                lastAcknowledged = now
                say("ok \(sequence) \(operation.rawValue) \(Self.milliseconds(now - began))")
            } catch let error as StoreError where error.code == .migratedSinceOpened {
                say("migrated \(sequence): \(error)")
                told = true
                break
            } catch {
                failed += 1
                say("error \(sequence): \(error)")
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        say(
            "stopped: \(acknowledged) writes acknowledged, \(failed) failed, longest write \(Self.milliseconds(longestWrite)) ms, "
                + "longest gap between acknowledgements \(Self.milliseconds(longestGap)) ms"
        )
        return told
    }

    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15)
    }
}

/// Set once a signal asked the writer to stop; read between writes.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    var isRaised: Bool { raised.load(ordering: .relaxed) }

    func raise() {
        raised.store(true, ordering: .relaxed)
    }
}
