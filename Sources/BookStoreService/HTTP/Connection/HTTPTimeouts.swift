/// How long the server waits for a client, and for its own requests when it stops.
///
/// ```swift
/// var configuration = ServiceConfiguration(store: url, models: models)
/// configuration.timeouts = HTTPTimeouts(idle: .seconds(30), requestHead: .seconds(5))
/// ```
///
/// Each bounds what a slow or absent client can hold: a descriptor, a task, a request's
/// buffer. `bookstore serve` takes them as `--idle-timeout`, `--header-timeout`,
/// `--body-timeout` and `--shutdown-grace` (in seconds).
public struct HTTPTimeouts: Sendable, Hashable {
    /// A connection with no request under way is closed after this long (60 s).
    public var idle: Duration
    /// From a request's first byte to the end of its head: a client slower than this gets
    /// a 408 and the connection is closed (10 s).
    public var requestHead: Duration
    /// From a request's head to the end of its body (30 s), likewise.
    public var requestBody: Duration
    /// On SIGINT or SIGTERM, how long requests in flight may take to finish before they are
    /// cut and the server exits (10 s).
    public var shutdownGrace: Duration

    /// Timeouts, each by default as its property says.
    public init(
        idle: Duration = .seconds(60),
        requestHead: Duration = .seconds(10),
        requestBody: Duration = .seconds(30),
        shutdownGrace: Duration = .seconds(10)
    ) {
        self.idle = idle
        self.requestHead = requestHead
        self.requestBody = requestBody
        self.shutdownGrace = shutdownGrace
    }
}
