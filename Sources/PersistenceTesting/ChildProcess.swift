import Foundation
import Synchronization

/// A child process started with `posix_spawn`, for tests that run commands, servers and
/// helpers.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` in a way that now
/// and then reads past the end of a buffer and crashes the whole test process (a segfault
/// in `memcpy` under `Process.run()`, fixed in later Foundation releases), and a test run
/// starts hundreds of children. Here the child gets the descriptors asked for and no other
/// (`posix_spawn_file_actions_addclosefrom_np`), so no child keeps another's pipe open; a
/// thread of its own waits for it to end.
///
/// ```swift
/// let output = ChildProcess.Pipe()
/// let child = try ChildProcess(executable: url, arguments: ["status"], output: output.writing)
/// output.closeWriting()
/// let text = output.reading.readDataToEndOfFile()
/// let status = child.waitUntilExit()
/// ```
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The status a shell would report: the exit status, or 128 + the signal.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// A pipe whose two ends are closed on `exec`: a child started meanwhile by another test
    /// (or a server of its) does not inherit them; the child this pipe is for gets its end by
    /// `dup2`.
    public final class Pipe: Sendable {
        /// The end the parent reads what the child writes from.
        public let reading: FileHandle
        /// The end the child writes to; close the parent's copy once the child has it.
        public let writing: FileHandle

        /// A new pipe, both ends closed on `exec`.
        public init() {
            var ends: [Int32] = [-1, -1]
            // Marked under the launch lock, so that no child starts between making and marking.
            ChildProcessLaunch.withLock {
                precondition(pipe(&ends) == 0, "pipe failed: \(String(cString: strerror(errno)))")
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            }
            reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            writing = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        }
    }

    /// The child's process identifier.
    public let identifier: pid_t
    private let termination = Mutex<Termination?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's environment; this process's when `nil`.
    ///   - workingDirectory: where it starts; this process's folder when `nil`.
    ///   - input, output, error: what its standard input, output and error are (the child's
    ///     end of a ``Pipe``, say); `/dev/null` when `nil`. The caller closes its copy of the
    ///     child's ends once this returns, so that reading sees the end when the child ends.
    public init(
        executable: URL,
        arguments: [String],
        environment: [String: String]? = nil,
        workingDirectory: URL? = nil,
        input: FileHandle? = nil,
        output: FileHandle? = nil,
        error: FileHandle? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (handle, target, mode) in [(input, Int32(0), O_RDONLY), (output, 1, O_WRONLY), (error, 2, O_WRONLY)] {
            if let handle {
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", mode, 0)
            }
        }
        if let workingDirectory { _ = Self.addChangeDirectory(&actions, workingDirectory.path) }
        _ = Self.addCloseFrom(&actions, 3)

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = ChildProcessLaunch.withLock { posix_spawn(&pid, executable.path, &actions, nil, argv, envp) }
        guard spawned == 0 else {
            throw ChildProcessError("cannot start \(executable.path): \(String(cString: strerror(spawned)))")
        }
        identifier = pid
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(identifier, &status, 0) == -1 && errno == EINTR {}
            // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import as macros.
            let signal = status & 0x7f
            termination.withLock { $0 = signal != 0 && signal != 0x7f ? .signalled(signal) : .exited((status >> 8) & 0xff) }
            ended.signal()
        }
    }

    /// Whether it has not ended yet.
    public var isRunning: Bool { termination.withLock { $0 == nil } }

    /// How it ended; `nil` while it runs.
    public var terminated: Termination? { termination.withLock { $0 } }

    /// Sends it `signal`, unless it has ended.
    public func send(_ signal: Int32) {
        termination.withLock { if $0 == nil { _ = kill(identifier, signal) } }
    }

    /// Blocks the calling thread until it ends (not a thread of the cooperative pool).
    @discardableResult
    public func waitUntilExit() -> Termination {
        ended.wait()
        ended.signal()
        return termination.withLock { $0 } ?? .exited(-1)
    }

    /// Waits up to `timeout` for it to end, without holding a thread; `nil` when it still runs.
    public func waitForExit(timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return terminated
    }

    // glibc has both since 2.34 and 2.29, but Swift's Glibc module leaves them out.
    private typealias FileActionWithInt = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias FileActionWithPath = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) -> Int32 {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return -1 }
        return unsafeBitCast(symbol, to: FileActionWithInt.self)(&actions, lowest)
    }

    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t, _ path: String) -> Int32 {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return -1 }
        return unsafeBitCast(symbol, to: FileActionWithPath.self)(&actions, path)
    }
}

/// A child that could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What failed, with the system's reason.
    public let description: String
    init(_ description: String) { self.description = description }
}
