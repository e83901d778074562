import Foundation
import Synchronization

/// The one moment at a time when a test process starts a child or makes a pipe for one.
///
/// A child started with `posix_spawn` inherits every descriptor of the test process that is
/// not close-on-exec. ``ChildProcess/Pipe`` makes its pipes and marks them close-on-exec
/// under this lock, and every start takes it, so no child (the throwaway PostgreSQL server,
/// say, which would hold them for its whole life) inherits a pipe made for another: the
/// other's output would never end, nor its input once the test closes its end.
public enum ChildProcessLaunch {
    private static let lock = Mutex(())

    static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withLock { _ in try body() }
    }
}
