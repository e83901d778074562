import Synchronization

/// How busy a database's connections are at one moment: for a dashboard, read when it
/// asks (a scrape of the service's `/metrics`), never kept up to date on the way of a query.
///
/// ```swift
/// let usage = container.store.database.connectionUsage
/// print(usage.readers.inUse, usage.readers.waiting)   // 1 0
/// ```
public struct ConnectionUsage: Sendable, Hashable {
    /// One kind of connection's counts.
    public struct Counts: Sendable, Hashable {
        /// Connections made and not closed.
        public var open: Int
        /// Connections running a caller's work.
        public var inUse: Int
        /// Callers waiting for a connection: queued behind a busy one, or for one to come free.
        public var waiting: Int

        /// Counts, all zero unless given.
        public init(open: Int = 0, inUse: Int = 0, waiting: Int = 0) {
            self.open = open
            self.inUse = inUse
            self.waiting = waiting
        }

        static func + (lhs: Counts, rhs: Counts) -> Counts {
            Counts(open: lhs.open + rhs.open, inUse: lhs.inUse + rhs.inUse, waiting: lhs.waiting + rhs.waiting)
        }
    }

    /// The connections reads run on (none where reads share the writer's).
    public var readers: Counts
    /// The one connection saves run on, one at a time (and reads, where there are no readers).
    public var writer: Counts

    /// Usage made of the readers' and the writer's counts.
    public init(readers: Counts, writer: Counts) {
        self.readers = readers
        self.writer = writer
    }
}

/// Counts the calls of a connection that runs one at a time: the one running and those
/// queued behind it. Two atomic additions a call, so that usage can be read at any moment
/// without taking a lock on the way of a query.
final class LaneLoad: Sendable {
    private let calls = Atomic<Int>(0)

    /// Runs `body`, counted from before it is queued until it has answered.
    func counting<T>(_ body: () async throws -> T) async rethrows -> T {
        calls.add(1, ordering: .relaxed)
        defer { calls.subtract(1, ordering: .relaxed) }
        return try await body()
    }

    /// The lane as one open connection: in use while a call is under way, the other
    /// calls waiting.
    var counts: ConnectionUsage.Counts {
        let calls = max(0, self.calls.load(ordering: .relaxed))
        return ConnectionUsage.Counts(open: 1, inUse: min(calls, 1), waiting: max(0, calls - 1))
    }
}
