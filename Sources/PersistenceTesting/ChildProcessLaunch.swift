import Synchronization

/// The one moment at a time when a test process starts a child.
///
/// A child started with `posix_spawn` inherits every descriptor of the test process that is
/// not close-on-exec. ``BuiltCommand`` makes its pipes and only then marks them so; were a
/// throwaway PostgreSQL server started in between, the server would hold the write ends
/// for its whole life and the command's output would never end. Both take this lock, so
/// the pipes are marked before any other child can be started.
enum ChildProcessLaunch {
    private static let lock = Mutex(())

    static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withLock { _ in try body() }
    }
}
