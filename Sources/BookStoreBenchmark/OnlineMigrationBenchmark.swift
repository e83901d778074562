import BookStore
import Foundation
import Logging
import Persistence
import Synchronization

/// `bookstore-benchmark migrate --online`: the same store migrated offline (no writer) and
/// online while a process of the previous release writes it at a steady rate through the
/// framework (``PreviousReleaseWriter``, in this process), on PostgreSQL. Reports the
/// online migration's time against the offline one, its phases, the writer's longest write
/// (the cut-over's stall) and errors, and whether every write the writer was told it made
/// is in the migrated store (``WriteJournal``).
struct OnlineMigrationBenchmark {
    let backend: PostgresBenchmarkBackend
    let models: BookStoreModels
    let books: Int
    /// The store's version, and the writer's: 2 (the chain to 5) or a later one.
    let fromVersion: Int
    let writerRate: Double
    let logger: Logger

    /// One write of the writer: when it began and ended, and whether it failed.
    struct Write: Sendable {
        var began: ContinuousClock.Instant
        var ended: ContinuousClock.Instant
        var failure: String?
    }

    func run() async throws -> OnlineMigrationBenchmarkResult {
        progress("writing a BookStore \(MigrationBenchmark.firstVersion) store of \(books) books and \(2 * books) pages")
        let source = try await backend.newStore("source")
        try await SourceStoreWriter(model: try models.model(version: MigrationBenchmark.firstVersion), books: books, logger: logger).write(to: source)
        let target = "BookStore \(fromVersion)"
        if fromVersion > MigrationBenchmark.firstVersion {
            progress("migrating it to \(target)")
            try await ProgressiveMigrator(chain: try BookStoreMigration.chain(models: models), logger: logger).migrateStore(at: source, to: target)
        }
        let offlineStore = try await backend.copy(source, label: "offline")
        let onlineStore = try await backend.copy(source, label: "online")

        progress("migrating offline, no writer")
        let offlineStarted = ContinuousClock.now
        try await ProgressiveMigrator(chain: try BookStoreMigration.chain(models: models), logger: logger).migrateStore(at: offlineStore)
        let offline = (ContinuousClock.now - offlineStarted).seconds

        progress("migrating online, a \(target) writer at \(Int(writerRate)) writes/s")
        let writer = try await PreviousReleaseWriter(url: onlineStore, version: fromVersion, seed: 1, logger: logger)
        let phases = Mutex<[(phase: OnlineMigrationPhase, at: ContinuousClock.Instant)]>([])
        var options = OnlineMigrationOptions()
        options.phaseObserver = { phase in phases.withLock { $0.append((phase, .now)) } }
        let stop = StopFlag()
        let writes = WriteLog()
        var started = ContinuousClock.now
        var ended = started
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await Self.write(writer, rate: writerRate, until: stop, into: writes) }
            // The writer in its stride before the migration starts, and after it ends.
            try await Task.sleep(for: .seconds(1))
            started = .now
            try await ProgressiveMigrator(chain: try BookStoreMigration.chain(models: models), logger: logger).migrateStoreOnline(
                at: onlineStore,
                options: options
            )
            ended = .now
            try await Task.sleep(for: .seconds(1))
            stop.raise()
            try await group.waitForAll()
        }
        await writer.close()
        progress("checking every acknowledged write is in the migrated store")
        let missing = try await writer.journal.missing(in: onlineStore)

        let seen = phases.withLock { $0 }
        func at(_ match: (OnlineMigrationPhase) -> Bool) -> ContinuousClock.Instant? { seen.first { match($0.phase) }?.at }
        let locked = at { $0 == .cutOverLocked } ?? ended
        let lockingStarted = at { if case .cutOverLocking = $0 { true } else { false } } ?? ended
        let all = writes.all
        let acknowledged = all.filter { $0.failure == nil }
        let longest = all.map { ($0.ended - $0.began).seconds }.max() ?? 0
        let failedBefore = all.filter { $0.failure != nil && $0.ended < locked }
        let failedAfter = all.filter { $0.failure != nil && $0.ended >= locked }
        return OnlineMigrationBenchmarkResult(
            books: books,
            pages: 2 * books,
            from: "BookStore \(fromVersion)",
            writerRate: writerRate,
            offlineSeconds: offline,
            onlineSeconds: (ended - started).seconds,
            captureSeconds: ((at { $0 == .captureInstalled } ?? started) - started).seconds,
            copySeconds: ((at { $0 == .copied } ?? started) - (at { $0 == .captureInstalled } ?? started)).seconds,
            bulkSeconds: ((at { $0 == .bulkMigrated } ?? started) - (at { $0 == .copied } ?? started)).seconds,
            catchUpSeconds: (lockingStarted - (at { $0 == .bulkMigrated } ?? started)).seconds,
            catchUpRounds: seen.filter { if case .caughtUp = $0.phase { true } else { false } }.count,
            cutOverSeconds: (ended - lockingStarted).seconds,
            cutOverAttempts: seen.filter { if case .cutOverLocking = $0.phase { true } else { false } }.count,
            writesAcknowledged: acknowledged.count,
            longestWriteMilliseconds: longest * 1_000,
            errorsBeforeCutOver: failedBefore.count,
            firstErrorBeforeCutOver: failedBefore.first?.failure,
            errorsAfterCutOver: failedAfter.count,
            firstErrorAfterCutOver: failedAfter.first?.failure,
            journalEntries: writer.journal.count,
            missingWrites: missing.count,
            firstMissing: missing.first
        )
    }

    /// Writes at `rate` until `stop`, or until told the store was migrated, noting each write.
    private static func write(_ writer: PreviousReleaseWriter, rate: Double, until stop: StopFlag, into writes: WriteLog) async {
        let started = ContinuousClock.now
        var sequence = 0
        // Cancelled when the migration failed: the group waits for this task.
        while !stop.isRaised && !Task.isCancelled {
            sequence += 1
            let due = started + .seconds(Double(sequence) / max(rate, 1))
            if due > .now { try? await Task.sleep(until: due) }
            let began = ContinuousClock.now
            do {
                guard try await writer.write(sequence) != nil else { continue }
                writes.append(Write(began: began, ended: .now))
            } catch let error as StoreError where error.code == .migratedSinceOpened {
                writes.append(Write(began: began, ended: .now, failure: "\(error)"))
                return
            } catch {
                writes.append(Write(began: began, ended: .now, failure: "\(error)"))
            }
        }
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("[postgres, online] \(message)…\n".utf8))
    }
}

/// The writer's writes, as they end.
final class WriteLog: Sendable {
    private let writes = Mutex<[OnlineMigrationBenchmark.Write]>([])

    var all: [OnlineMigrationBenchmark.Write] { writes.withLock { $0 } }

    func append(_ write: OnlineMigrationBenchmark.Write) {
        writes.withLock { $0.append(write) }
    }
}

/// What ``OnlineMigrationBenchmark`` measured.
struct OnlineMigrationBenchmarkResult: Codable {
    var books: Int
    var pages: Int
    var from: String
    var writerRate: Double
    var offlineSeconds: Double
    var onlineSeconds: Double
    var captureSeconds: Double
    var copySeconds: Double
    var bulkSeconds: Double
    var catchUpSeconds: Double
    var catchUpRounds: Int
    var cutOverSeconds: Double
    var cutOverAttempts: Int
    var writesAcknowledged: Int
    var longestWriteMilliseconds: Double
    var errorsBeforeCutOver: Int
    var firstErrorBeforeCutOver: String?
    var errorsAfterCutOver: Int
    var firstErrorAfterCutOver: String?
    var journalEntries: Int
    var missingWrites: Int
    var firstMissing: String?

    var ratioToOffline: Double { onlineSeconds / max(offlineSeconds, 1e-9) }

    func printReport() {
        print("\n\(from) → BookStore 5 online on postgres: \(books) books, \(pages) pages, a \(from) writer at \(Int(writerRate)) writes/s")
        print(String(format: "offline (no writer) %.3f s; online %.3f s: %.2f× offline", offlineSeconds, onlineSeconds, ratioToOffline))
        print(
            String(
                format: "phases: capture %.3f s, copy %.3f s, bulk %.3f s, catch-up %.3f s (%d rounds), cut-over %.3f s (%d attempts)",
                captureSeconds,
                copySeconds,
                bulkSeconds,
                catchUpSeconds,
                catchUpRounds,
                cutOverSeconds,
                cutOverAttempts
            )
        )
        print(
            String(
                format: "writer: %d writes acknowledged, longest write (failed ones too) %.1f ms, %d errors before the cut-over, %d after",
                writesAcknowledged,
                longestWriteMilliseconds,
                errorsBeforeCutOver,
                errorsAfterCutOver
            )
        )
        if let firstErrorBeforeCutOver { print("first error before the cut-over: \(firstErrorBeforeCutOver)") }
        if let firstErrorAfterCutOver { print("first error after the cut-over: \(firstErrorAfterCutOver)") }
        print(
            "every acknowledged write in the migrated store: \(missingWrites == 0 ? "yes" : "NO, \(missingWrites) missing — \(firstMissing ?? "")") (\(journalEntries) objects written)"
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(self), let line = String(data: data, encoding: .utf8) { print(line) }
    }
}
