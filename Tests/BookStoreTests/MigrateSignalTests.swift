import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing
@testable import Persistence

/// SIGINT and SIGTERM stop `bookstore migrate` cleanly: the migration is cancelled (a
/// statement waiting in the database is interrupted), its work removed, the store left
/// whole, where it stands said, and the command ends with 130 or 143; the next run completes.
@Suite("a migration stopped by a signal")
struct MigrateSignalTests {
    static let generated = 20_000

    static let cases: [(MigrationEngine, Int32)] = [(.sqlite, SIGTERM), (.sqlite, SIGINT), (.postgres, SIGTERM), (.postgres, SIGINT)]

    @Test(arguments: cases)
    func cleansUpSaysWhereTheStoreStandsAndTheNextRunCompletes(engine: MigrationEngine, signal: Int32) async throws {
        switch engine {
        case .sqlite:
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            try await stopAndResume(sqliteStoreURL(in: directory), engine: engine, signal: signal)
        case .postgres:
            try await TestPostgres.withDatabase { url in try await stopAndResume(url, engine: engine, signal: signal) }
        }
    }

    private func stopAndResume(_ url: StoreURL, engine: MigrationEngine, signal: Int32) async throws {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "3", "--count", "\(Self.generated)", "--store", store])
        #expect(seed.status == 0, "\(seed.stderr)")
        let before = try await StoreSnapshot(url)

        // PostgreSQL: a transaction of the test's own holds a lock the swap of the first step
        // needs, so the migration waits inside the database until the signal's cancellation
        // interrupts it; without that, it would wait as long as the lock is held.
        var holder: PostgresConnection?
        if case .postgres(let configuration) = url.kind {
            let connection = try PostgresConnection(configuration: configuration)
            try connection.execute("BEGIN")
            try connection.execute("LOCK TABLE \(configuration.quotedSchema).zpublication IN ACCESS SHARE MODE")
            holder = connection
        }
        // SQLite: the signal goes as soon as the first streamed step has created its new store,
        // from the thread that reads the output, whatever the tests beside this one keep busy.
        let trigger: WatchedProcess.Trigger? = engine == .sqlite
            ? WatchedProcess.Trigger(signal: signal) { $0.contains("step1.sqlite") && $0.contains("created store") }
            : nil
        let process = try WatchedProcess(try BookStoreProcess.executable, ["migrate", "--store", store, "--log-level", "info"], trigger: trigger)
        // Whatever fails below, nothing outlives the test.
        defer {
            kill(process.identifier, SIGKILL)
            holder?.close()
        }
        switch engine {
        case .sqlite:
            #expect(await process.waitFor { _ in process.triggered }, "the migration never started its first step: \(process.output)")
        case .postgres:
            #expect(try await Self.waitForALockWait(url), "the migration never waited on the test's lock: \(process.output)")
            kill(process.identifier, signal)
        }
        let sent = ContinuousClock.now
        let status = await process.waitUntilExit(timeout: .seconds(20))
        let stopping = ContinuousClock.now - sent
        try holder?.execute("ROLLBACK")
        let output = process.output
        #expect(status == 128 + signal, "exit status \(String(describing: status)): \(output)")
        #expect(stopping < .seconds(10), "stopping took \(stopping)")
        #expect(output.contains("\(signal == SIGINT ? "SIGINT" : "SIGTERM") received: cancelling the migration"), "\(output)")
        #expect(output.contains("the migration was cancelled"), "\(output)")
        #expect(output.contains("The store is at model version BookStore 3; 2 steps remain to BookStore 5."), "\(output)")

        try await expectUnchanged(url, since: before)

        let again = try await BookStoreProcess.running(["migrate", "--store", store, "--log-level", "warning"])
        #expect(again.status == 0, "\(again.stderr)")
        try await expectNoLeftovers(url)
        let counts = try await PersistentStore.inspect(url) { try $0.rows("""
            SELECT (SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE), (SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL)
            """).map(\.values) }
        #expect(counts.first?.map(\.int64) == [Int64(Self.generated + 4), Int64(2 * Self.generated + 12)])
    }

    /// Waits until a session of the store's database waits for a lock.
    static func waitForALockWait(_ url: StoreURL) async throws -> Bool {
        for _ in 0..<3_000 {
            let waiting = try await PersistentStore.inspect(url) { connection in
                try connection.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")?.int64 ?? 0
            }
            if waiting > 0 { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A child process whose standard output and error are collected as they come, so a test
/// can wait for a line before acting.
final class WatchedProcess: Sendable {
    /// A signal sent the moment the output first satisfies `condition`.
    struct Trigger: Sendable {
        let signal: Int32
        let condition: @Sendable (String) -> Bool
    }

    private let process: Process
    /// The child's standard input, when it was asked for.
    private let input: Pipe?
    private let collected = Mutex("")
    private let fired = Mutex(false)

    /// Whether the trigger's signal was sent.
    var triggered: Bool { fired.withLock { $0 } }

    var identifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var output: String { collected.withLock { $0 } }

    /// `readsInput`: the child's standard input is a pipe the test writes with ``send(_:)``;
    /// `small`: it runs where that file system is mounted, for a store on it.
    init(_ executable: URL, _ arguments: [String], trigger: Trigger? = nil, readsInput: Bool = false, on small: SmallFileSystem? = nil) throws {
        let process = Process()
        let launched = try small?.launching(executable, arguments, in: BuiltCommand.packageRoot) ?? (executable: executable, arguments: arguments)
        process.executableURL = launched.executable
        process.arguments = launched.arguments
        // Made and marked under the launch lock (see `ChildProcessLaunch`).
        var output: Pipe?, input: Pipe?
        try ChildProcessLaunch.run(process) { process in
            let made = Pipe()
            process.standardOutput = made
            process.standardError = made
            input = readsInput ? Pipe() : nil
            if let input { process.standardInput = input }
            output = made
            return [made] + (input.map { [$0] } ?? [])
        }
        guard let pipe = output else { preconditionFailure("the launch made the pipes") }
        self.input = input
        self.process = process
        // Cleared at the end of the output, which ends the reference to the process.
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            let output = collected.withLock { output in
                output += String(decoding: data, as: UTF8.self)
                return output
            }
            if let trigger, !fired.withLock({ $0 }), trigger.condition(output) {
                fired.withLock { $0 = true }
                kill(process.processIdentifier, trigger.signal)
            }
        }
    }

    /// Writes `text` to the child's standard input.
    func send(_ text: String) {
        input?.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Closes the child's standard input: it reads the end.
    func endInput() {
        try? input?.fileHandleForWriting.close()
    }

    /// Waits up to 30 s for the output to satisfy `condition`.
    func waitFor(_ condition: (String) -> Bool) async -> Bool {
        for _ in 0..<3_000 {
            if condition(output) { return true }
            if !process.isRunning { return condition(output) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// The exit status (128 + the signal when a signal ended it), or `nil` when it did not
    /// end within `timeout` (it is then killed).
    func waitUntilExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        // Let the last output arrive.
        try? await Task.sleep(for: .milliseconds(50))
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}
