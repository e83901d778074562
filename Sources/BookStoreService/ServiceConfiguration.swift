import BookStore
import Persistence

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How to run the BookStore service: where its store is, where it listens, who may write,
/// whether it migrates the store on start-up.
///
/// ```swift
/// let configuration = ServiceConfiguration(
///     store: try StoreURL("sqlite://./bookstore.sqlite"), models: try BookStoreModels.load(),
///     address: .tcp(host: "127.0.0.1", port: 8080))
/// ```
public struct ServiceConfiguration: Sendable {
    /// Where the server listens.
    public enum Address: Sendable, Hashable, CustomStringConvertible {
        /// A TCP address and port, as `127.0.0.1` and `8080`.
        case tcp(host: String, port: Int)
        /// A Unix domain socket at `path`.
        case unixSocket(path: String)

        /// `http://host:port` or `unix:/path`.
        public var description: String {
            switch self {
            case .tcp(let host, let port): "http://\(host):\(port)"
            case .unixSocket(let path): "unix:\(path)"
            }
        }

        /// Whether only this machine can reach the address: a loopback host (`localhost`,
        /// 127.0.0.0/8, `::1`) or a Unix domain socket, which its file's permissions guard.
        /// Any other host, a name included, may be reached from elsewhere.
        public var isLocal: Bool {
            switch self {
            case .unixSocket: return true
            case .tcp(let host, _):
                let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
                if bare.lowercased() == "localhost" { return true }
                var v4 = in_addr()
                if inet_pton(AF_INET, bare, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
                var v6 = in6_addr()
                if inet_pton(AF_INET6, bare, &v6) == 1 {
                    return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
                }
                return false
            }
        }
    }

    /// The store served (and migrated on start-up, unless ``migrationStore`` says where).
    public var store: StoreURL
    /// Where migrations reach the store, when ``store`` goes through a connection pooler in
    /// transaction mode (PgBouncer's `pool_mode = transaction`): a URL to the server itself,
    /// or a pooler in session mode, since a migration holds a session lock. By default the
    /// store's own URL.
    public var migrationStore: StoreURL
    /// Who may write: by default anyone, on loopback only (see ``WriteAccess``).
    public var writeAccess: WriteAccess
    /// BookStore's model versions: the current one is served, the others migrated from.
    public var models: BookStoreModels
    /// Where the server listens.
    public var address: Address
    /// Migrate an outdated store on start-up (the default); otherwise wait for another
    /// process (`bookstore migrate`) to do it, answering 503 meanwhile.
    public var migrate: Bool
    /// Migrate an outdated store online on start-up (PostgreSQL): the previous release's
    /// replicas keep reading and writing it meanwhile, held off only for the cut-over
    /// (`ProgressiveMigrator.migrateStoreOnline(at:to:storeVersion:options:progress:)`);
    /// `nil` (the default) migrates offline.
    public var onlineMigration: OnlineMigrationOptions?
    /// How often a service started with `migrate: false` checks whether the store was migrated.
    public var migrationPollInterval: Duration
    /// Seconds a client is asked to wait (`Retry-After`) while the store is not ready.
    public var retryAfterSeconds: Int
    /// How long the server waits for clients, and for its requests when it stops.
    public var timeouts: HTTPTimeouts
    /// Where `GET /metrics` reads from; `nil` (the default): no metrics route, no request
    /// metrics. The process bootstraps swift-metrics with its ``ServiceMetrics/factory``.
    public var metrics: ServiceMetrics?
    /// Called when a migration is planned and published as progress, before its first
    /// step runs. Tests hold the migration here to watch the service answer 503s.
    public var beforeMigration: @Sendable (MigrationPlan) async throws -> Void

    /// A configuration; every parameter but the store and the models has the default documented on its property.
    public init(
        store: StoreURL,
        migrationStore: StoreURL? = nil,
        models: BookStoreModels,
        address: Address = .tcp(host: "127.0.0.1", port: 8080),
        writeAccess: WriteAccess = .anonymousOnLoopback,
        migrate: Bool = true,
        onlineMigration: OnlineMigrationOptions? = nil,
        migrationPollInterval: Duration = .seconds(2),
        retryAfterSeconds: Int = 5,
        timeouts: HTTPTimeouts = HTTPTimeouts(),
        metrics: ServiceMetrics? = nil,
        beforeMigration: @escaping @Sendable (MigrationPlan) async throws -> Void = { _ in }
    ) {
        self.store = store
        self.migrationStore = migrationStore ?? store
        self.models = models
        self.address = address
        self.writeAccess = writeAccess
        self.migrate = migrate
        self.onlineMigration = onlineMigration
        self.migrationPollInterval = migrationPollInterval
        self.retryAfterSeconds = retryAfterSeconds
        self.timeouts = timeouts
        self.metrics = metrics
        self.beforeMigration = beforeMigration
    }
}
