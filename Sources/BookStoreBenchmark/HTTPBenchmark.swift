import BookStore
import BookStoreService
import Foundation
import Logging
import Persistence
import ServiceLifecycle

/// One backend's HTTP benchmark: see ``HTTPBenchmarkCommand``.
struct HTTPBenchmark: Sendable {
    let backend: any BenchmarkBackend
    let models: BookStoreModels
    let books: Int
    let load: WrkRunner
    /// PostgreSQL: how the servers reach the store, as behind a pooler in this mode (`nil`:
    /// as the URL says).
    var poolMode: PostgresConfiguration.PoolMode? = nil
    /// The service's metrics (`nil`: served without).
    var metrics: ServiceMetrics? = nil
    let logger: Logger

    static let sourceVersion = 2
    static let host = "127.0.0.1"
    /// How long the servers may take to answer their first request: the service opens the
    /// store (and checks it needs no migration) while already listening.
    static let startTimeout = Duration.seconds(120)

    /// Refusals of the benchmark itself: a server that stopped or never got ready, wrk failing.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    func run() async throws -> HTTPBenchmarkResult {
        progress("writing a BookStore \(Self.sourceVersion) store of \(books) books and \(2 * books) pages")
        let store = try await backend.newStore("http")
        try await SourceStoreWriter(model: try models.model(version: Self.sourceVersion), books: books, logger: logger).write(to: store)
        progress("migrating it to \(models.current.name)")
        try await BookStoreMigration.migrator(models: models, logger: logger).migrateStore(at: store)
        let served = served(store)

        // Opened as the service opens its store: a writer and two readers.
        let database = try await BareHandler.openDatabase(served)
        let measured: HTTPBenchmarkResult.Measured
        do {
            measured = try await serveAndLoad(store: served, database: database)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
        return HTTPBenchmarkResult(backend: backend.name, books: books, metrics: metrics != nil, load: load, measured: measured)
    }

    /// The store as the servers reach it: in ``poolMode`` where one is named.
    private func served(_ store: StoreURL) -> StoreURL {
        guard let poolMode, case .postgres(var configuration) = store.kind else { return store }
        configuration.poolMode = poolMode
        return .postgres(configuration)
    }

    /// Runs both servers in one service group while wrk loads them, then shuts the group down.
    private func serveAndLoad(store: StoreURL, database: any Database) async throws -> HTTPBenchmarkResult.Measured {
        let ports = try LoopbackSocket.freePorts(2, host: Self.host)
        let service = BookStoreService(
            configuration: ServiceConfiguration(store: store, models: models, address: .tcp(host: Self.host, port: ports[0]), metrics: metrics),
            logger: logger
        )
        let bare = BareHandler(database: database, queries: BareQueries(schema: StoreSchema(model: models.current, dialect: backend.dialect)))
        let servers = ServiceGroup(
            configuration: .init(
                services: [try service.makeApplication(), bare.makeApplication(host: Self.host, port: ports[1], logger: logger)],
                logger: logger
            )
        )
        // The measurements' outcome comes back as a value, so that the servers shut down
        // gracefully whether they succeeded or not.
        return try await withThrowingTaskGroup(of: Result<HTTPBenchmarkResult.Measured, any Error>?.self) { tasks in
            tasks.addTask {
                try await servers.run()
                return nil
            }
            tasks.addTask {
                do {
                    return .success(try await self.measure(servicePort: ports[0], barePort: ports[1]))
                } catch {
                    return .failure(error)
                }
            }
            // The servers end first only when one of them failed: its error is thrown here,
            // which cancels the measurements and wrk with them.
            guard let outcome = try await tasks.next() ?? nil else {
                throw Failure("the servers stopped before the measurements were done")
            }
            progress("stopping the servers")
            await servers.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try outcome.get()
        }
    }

    /// Waits for both servers, then, round by round, loads each request on the service and
    /// the bare handler in turn, never both at once: a figure is the median round's, so that
    /// a slow spell of a shared machine moves one round of every request rather than all of
    /// one request's.
    private func measure(servicePort: Int, barePort: Int) async throws -> HTTPBenchmarkResult.Measured {
        progress("waiting for the service's /health")
        try await HTTPProbe.waitForStatus(200, host: Self.host, port: servicePort, path: "/health", timeout: Self.startTimeout)
        try await HTTPProbe.waitForStatus(200, host: Self.host, port: barePort, path: "/publications/1", timeout: Self.startTimeout)
        var measured = HTTPBenchmarkResult.Measured()
        for round in 1...load.rounds {
            for target in WrkRunner.Target.allCases {
                progress("round \(round) of \(load.rounds), wrk on the service: \(target.rawValue)")
                let service = try await load.run(target, host: Self.host, port: servicePort, warmingUp: round == 1)
                progress("round \(round) of \(load.rounds), wrk on the bare handler: \(target.rawValue)")
                let bare = try await load.run(target, host: Self.host, port: barePort, warmingUp: round == 1)
                measured.add(target, service: service, bare: bare)
            }
        }
        return measured
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("[\(backend.name)] \(message)…\n".utf8))
    }
}
