import Foundation
import Synchronization

/// The one moment at a time when a test process starts a child.
///
/// A child started with `posix_spawn` inherits every descriptor of the test process that is
/// not close-on-exec. ``BuiltCommand`` makes its pipes and only then marks them so; were a
/// throwaway PostgreSQL server (or another test's child) started in between, it would hold
/// the write ends for its whole life: the command's output would never end, nor a child's
/// input once the test closes its end. Every launch takes this lock, so the pipes are
/// marked before any other child can be started.
public enum ChildProcessLaunch {
    private static let lock = Mutex(())

    static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withLock { _ in try body() }
    }

    /// Starts `process` with the pipes `attach` makes and gives it (its standard input,
    /// output, error), all under the lock: every end is marked close-on-exec before any other
    /// child can start (the child's own copies, made with `dup2`, are not), so no other
    /// child keeps them open.
    ///
    /// ```swift
    /// let output = Pipe()
    /// try ChildProcessLaunch.run(process) { process in
    ///     process.standardOutput = output
    ///     return [output]
    /// }
    /// ```
    public static func run(_ process: Process, attach: (Process) -> [Pipe]) throws {
        try withLock {
            for pipe in attach(process) {
                for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                    _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
                }
            }
            try process.run()
        }
    }
}
