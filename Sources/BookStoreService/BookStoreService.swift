import Foundation
import Hummingbird
import Logging
import NIOCore
import Persistence
import ServiceLifecycle

/// The BookStore REST service: publications and their pages over HTTP, on a store that
/// it migrates to the current model on start-up while already answering.
///
/// ```swift
/// let service = BookStoreService(configuration: ServiceConfiguration(
///     store: try StoreURL("sqlite://./bookstore.sqlite"), models: try BookStoreModels.load()), logger: logger)
/// try await service.run()   // until SIGINT or SIGTERM
/// ```
///
/// On SIGINT or SIGTERM the server stops accepting connections and finishes the requests
/// in flight; a migration in progress is cancelled, which leaves the store as it was at its
/// last completed step; then the store is closed.
public struct BookStoreService: Sendable {
    /// How the service runs: store, address, write access, migration, metrics.
    public let configuration: ServiceConfiguration
    /// Where the store is; the routes go through it.
    public let gate: StoreGate
    let logger: Logger
    /// How the store service ends the group when the store cannot be served.
    let failure = StoreFailureRelay()

    /// A service run as `configuration` says, logging to `logger`.
    public init(configuration: ServiceConfiguration, logger: Logger) {
        self.configuration = configuration
        self.gate = StoreGate(
            store: configuration.store,
            modelName: configuration.models.current.name,
            retryAfterSeconds: configuration.retryAfterSeconds
        )
        self.logger = logger
    }

    /// Adds every operation of the API to `router`.
    func addRoutes(to router: Router<BookStoreRequestContext>) {
        router.addRoutes(PublicationRoutes(gate: gate).endpoints, atPath: "/publications")
        router.addRoutes(PageRoutes(gate: gate).endpoints)
        let health = HealthRoutes(gate: gate)
        router.addRoutes(health.endpoints)
        router.addRoutes(StatusPage(health: health).endpoints)
        if let metrics = configuration.metrics { router.addRoutes(MetricsRoute(gate: gate, metrics: metrics).endpoints) }
        router.addRoutes(OpenAPIDocument.endpoints(writeAccess: configuration.writeAccess, servesMetrics: configuration.metrics != nil))
    }

    /// Every operation of the API as the router holds it: method and path template, written
    /// as OpenAPI writes it (`GET /publications/{id}`). Read off a router of the routes
    /// alone: a router's middleware is added before its routes, and the middleware that
    /// answers 405s needs them.
    var routes: [Router<BookStoreRequestContext>.RouteDescription] {
        let router = Router(context: BookStoreRequestContext.self)
        addRoutes(to: router)
        return router.routes
    }

    /// The router: the middleware, each with one job, outermost first — `nosniff` on every
    /// response, the request's id, the access log, the last-resort 500, request metrics
    /// (where configured), problem responses, the write key check, canonical paths — then
    /// the routes.
    func makeRouter() -> Router<BookStoreRequestContext> {
        let allowedMethods = AllowedMethods(routes)
        // HEAD answers as GET without the body (`curl -I`).
        let router = Router(context: BookStoreRequestContext.self, options: .autoGenerateHeadEndpoints)
        let writeKeys: WriteKeys? = if case .keys(let keys) = configuration.writeAccess { keys } else { nil }
        // Each added on its own: the router specializes a concrete middleware's conformance,
        // while a builder stack's generic `_Middleware2` runs unspecialized (see
        // ``RequestEnvelopeMiddleware``).
        router.add(middleware: RequestEnvelopeMiddleware())
        // Outside the problem middleware: it counts every refusal with the status it answered.
        if configuration.metrics != nil { router.add(middleware: RequestMetricsMiddleware<BookStoreRequestContext>()) }
        router.add(middleware: ProblemMiddleware(allowedMethods: allowedMethods))
        if let writeKeys { router.add(middleware: WriteAuthorizationMiddleware(keys: writeKeys)) }
        router.add(middleware: CanonicalPathMiddleware())
        addRoutes(to: router)
        return router
    }

    /// The Hummingbird application: the router, and the store as a service of its group,
    /// so that the server listens while the store is migrated.
    ///
    /// - Throws: ``ServiceStartError/anonymousWritesBeyondLoopback(_:)`` where anyone could
    ///   write beyond this machine (`checkWriteAccess()`).
    public func makeApplication() throws -> some ApplicationProtocol {
        try checkWriteAccess()
        switch configuration.writeAccess {
        case .keys(let keys):
            logger.notice("writes need a bearer key (\(keys.count == 1 ? "1 key" : "\(keys.count) keys") in the write key file)")
        case .anonymous:
            logger.warning("anyone who reaches \(configuration.address) may write: --allow-anonymous-writes is for a deliberate demo")
        case .anonymousOnLoopback:
            break
        }
        let address: BindAddress =
            switch configuration.address {
            case .tcp(let host, let port): .hostname(host, port: port)
            case .unixSocket(let path): .unixDomainSocket(path: path)
            }
        let logger = self.logger
        let configured = configuration.address
        return Application(
            router: makeRouter(),
            server: BookStoreHTTPChannel.server(timeouts: configuration.timeouts),
            configuration: .init(address: address, serverName: "BookStore"),
            services: [StoreService(configuration: configuration, gate: gate, logger: logger, failure: failure)],
            onServerRunning: { channel in
                logger.notice("listening on \(Self.listeningAddress(configured, bound: channel.localAddress.map(String.init(describing:))))")
            },
            logger: logger
        )
    }

    /// Where the server listens, with the port it was given when asked for port 0. NIO
    /// describes a bound TCP address as `[IPv4]127.0.0.1/127.0.0.1:43211`.
    static func listeningAddress(_ configured: ServiceConfiguration.Address, bound: String?) -> String {
        guard case .tcp(let host, let port) = configured else { return configured.description }
        let boundPort = bound?.split(separator: ":").last.flatMap { Int($0) } ?? port
        return ServiceConfiguration.Address.tcp(host: host, port: boundPort).description
    }

    /// Runs until SIGINT or SIGTERM, then shuts down gracefully: requests in flight have
    /// ``HTTPTimeouts/shutdownGrace`` to finish, after which they are cut (their connections
    /// closed) and the server stops.
    ///
    /// - Throws: when the server cannot listen (``ServiceStartError``: the address is taken,
    ///   or writes would be open beyond loopback), or the store cannot be opened or migrated.
    ///   What can be known about the store without opening it (a path that is no file, a
    ///   damaged file, a folder that cannot be written) is refused before the server listens.
    public func run() async throws {
        try checkWriteAccess()
        if case .unixSocket(let path) = configuration.address { try Self.removeStaleSocket(at: path) }
        try await Self.checkStore(configuration.store)
        var group = ServiceGroupConfiguration(services: [try makeApplication()], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = configuration.timeouts.shutdownGrace
        let serviceGroup = ServiceGroup(configuration: group)
        failure.install { await serviceGroup.triggerGracefulShutdown() }
        do {
            try await serviceGroup.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw ServiceStartError.addressInUse(configuration.address)
        }
        if let error = failure.error { throw error }
    }

    /// Refuses, before the server listens, writes open to anyone beyond this machine.
    func checkWriteAccess() throws {
        if case .anonymousOnLoopback = configuration.writeAccess, !configuration.address.isLocal {
            throw ServiceStartError.anonymousWritesBeyondLoopback(configuration.address)
        }
    }

    /// Refuses, before the server listens, a store that cannot be served whatever happens
    /// next: a path that is no regular file, a file or folder this process cannot write, a
    /// file that is not a store or cannot be read. A missing store passes (it is created).
    /// Work that must finish before listening rather than before requests: a refusal here
    /// leaves nothing to shut down.
    static func checkStore(_ url: StoreURL) async throws {
        // A server's store is reached once the server listens; a file is checked here.
        guard url.filePath != nil else { return }
        try PersistentStore.checkWritable(url)
        do {
            _ = try await PersistentStore.metadata(at: url)
        } catch let error as StoreError where error.code == .storeNotFound {
            // Created empty at the current model once the server listens.
        }
    }

    /// A socket file left by a server that was killed would make binding fail, and is
    /// removed; one a server may still answer on is refused, since taking it over would leave
    /// that server unreachable. A file that is not a socket is left alone (binding then
    /// fails and says so).
    static func removeStaleSocket(at path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else { return }
        guard UnixSocketProbe.isStale(path) else {
            throw ServiceStartError.addressInUse(.unixSocket(path: path))
        }
        try FileManager.default.removeItem(atPath: path)
    }
}
