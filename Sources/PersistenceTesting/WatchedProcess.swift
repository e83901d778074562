import Foundation
import Synchronization

/// A child process whose standard output and error are collected as they come, so a test
/// can wait for a line before acting, or act the moment it appears (``Trigger``).
///
/// ```swift
/// let trigger = WatchedProcess.Trigger(signal: SIGKILL) { $0.contains("created store") }
/// let process = try WatchedProcess(executable, ["migrate", "--store", store], trigger: trigger)
/// let status = await process.waitUntilExit(timeout: .seconds(60))   // 137
/// ```
public final class WatchedProcess: Sendable {
    /// A signal sent the moment the output first satisfies `condition`, from the thread that
    /// reads the output: however busy the test process is.
    public struct Trigger: Sendable {
        let signal: Int32
        let condition: @Sendable (String) -> Bool

        /// Sends `signal` to the process the first time its output so far satisfies `condition`.
        public init(signal: Int32, condition: @escaping @Sendable (String) -> Bool) {
            self.signal = signal
            self.condition = condition
        }
    }

    private let child: ChildProcess
    /// The child's standard input, when it was asked for.
    private let input: FileHandle?
    private let collected = Mutex(Data())
    private let fired = Mutex(false)
    /// Whether the output reached its end (the child and every process that shared its
    /// output closed it).
    private let outputEnded = Mutex(false)

    /// Whether the trigger's signal was sent.
    public var triggered: Bool { fired.withLock { $0 } }
    /// The child's process identifier.
    public var identifier: Int32 { child.identifier }
    /// Whether the child has not ended yet.
    public var isRunning: Bool { child.isRunning }
    /// Its standard output and error, interleaved as written.
    public var output: String { String(decoding: collected.withLock { $0 }, as: UTF8.self) }

    /// Starts `executable`.
    ///
    /// - Parameters:
    ///   - environment: the child's environment; this process's when `nil`.
    ///   - readsInput: the child's standard input is a pipe the test writes with ``send(_:)``.
    ///   - small: it runs where that file system is mounted, for a store on it.
    public init(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        trigger: Trigger? = nil,
        readsInput: Bool = false,
        on small: SmallFileSystem? = nil
    ) throws {
        let launched = try small?.launching(executable, arguments, in: BuiltCommand.packageRoot) ?? (executable: executable, arguments: arguments)
        let output = ChildProcess.Pipe()
        let input = readsInput ? ChildProcess.Pipe() : nil
        child = try ChildProcess(
            executable: launched.executable,
            arguments: launched.arguments,
            environment: environment,
            workingDirectory: BuiltCommand.packageRoot,
            input: input?.reading,
            output: output.writing,
            error: output.writing
        )
        try? output.writing.close()
        try? input?.reading.close()
        self.input = input?.writing
        Thread.detachNewThread { [self] in
            while true {
                let data = output.reading.availableData
                if data.isEmpty { break }
                let text = collected.withLock { collected in
                    collected.append(data)
                    return String(decoding: collected, as: UTF8.self)
                }
                if let trigger, !fired.withLock({ $0 }), trigger.condition(text) {
                    fired.withLock { $0 = true }
                    child.send(trigger.signal)
                }
            }
            outputEnded.withLock { $0 = true }
        }
    }

    /// Writes `text` to the child's standard input.
    public func send(_ text: String) {
        try? input?.write(contentsOf: Data(text.utf8))
    }

    /// Closes the child's standard input: it reads the end.
    public func endInput() {
        try? input?.close()
    }

    /// Sends it `signal`, unless it has ended.
    public func signal(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits up to a minute for the output to satisfy `condition`.
    public func waitFor(_ condition: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if condition(output) { return true }
            if !child.isRunning { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(output)
    }

    /// The exit status (128 + the signal when a signal ended it), with its output read to
    /// the end; `nil` when it did not end within `timeout` (it is then killed).
    public func waitUntilExit(timeout: Duration) async -> Int32? {
        guard let termination = await child.waitForExit(timeout: timeout) else {
            child.send(SIGKILL)
            return nil
        }
        // Its last output, read to the end (a minute at most: a grandchild may hold the pipe).
        let reading = ContinuousClock.now + .seconds(60)
        while !outputEnded.withLock({ $0 }), ContinuousClock.now < reading { try? await Task.sleep(for: .milliseconds(10)) }
        return termination.shellStatus
    }
}
