import ArgumentParser
import BookStore
import BookStoreService
import CoreMetrics
import Foundation
import Logging
import Persistence

struct HTTPBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Load the BookStore service with wrk, against a bare Hummingbird handler running the same SQL on the same store.",
        discussion: """
            For each backend: writes a BookStore 2 store of N books and 2N pages and migrates it to BookStore 5 with the \
            framework, starts the service and a bare Hummingbird application (the same routes, the same queries straight \
            through the framework's Database) on loopback in this process, and runs wrk against each in turn for \
            GET /publications/{id} (random ids), the keyset page GET /publications?limit=20&after=ID (random ids) and \
            GET /publications?limit=20&offset=K (random offsets), every request once a round. Prints the median \
            round's requests/s, their ratio and the 99th-percentile latency, how many times longer a keyset page takes \
            than one publication, and one JSON line per backend. Needs wrk (`apt-get install wrk`).
            """
    )

    @Option(name: .long, help: "Books in the store (each with two pages).")
    var books = 100_000

    @Option(name: .long, parsing: .upToNextOption, help: "The backends to run: sqlite, postgres.")
    var backend: [BackendName] = [.sqlite, .postgres]

    @Option(name: .long, help: "Seconds of each measured wrk run.")
    var duration = 5

    @Option(name: .long, help: "Rounds of measured runs: each round loads every request on both servers in turn; a figure is the median round's.")
    var rounds = 3

    @Option(name: .long, help: "Seconds of load before each request's first measured run on each server, not measured (0: none).")
    var warmup = 1

    @Option(name: .long, help: "wrk's open connections.")
    var connections = 64

    @Option(name: .long, help: "wrk's threads.")
    var threads = 2

    @Option(name: .long, help: ArgumentHelp("The wrk executable.", valueName: "path"))
    var wrk = "/usr/bin/wrk"

    @Option(name: .long, help: ArgumentHelp("Where the SQLite stores are written (default: a temporary folder).", valueName: "folder"))
    var workFolder: String?

    @OptionGroup var postgres: PostgresOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "PostgreSQL: serve (the service and the bare handler alike) as behind a pooler in this mode, on the same server: with transaction, every statement runs unnamed and every transaction sets the schema; the store is written and migrated over the server itself.",
            valueName: "mode"
        )
    )
    var poolMode: PostgresConfiguration.PoolMode?

    @Flag(
        name: .long,
        help:
            "Serve without metrics (as `bookstore serve --no-metrics`); by default the service records request metrics and serves /metrics, as `bookstore serve` does."
    )
    var noMetrics = false

    @Option(name: .long, help: "The framework's and the servers' log level.")
    var logLevel: Logger.Level = .warning

    func validate() throws {
        guard books >= 1 else { throw ValidationError("--books must be at least 1, got \(books)") }
        guard duration >= 1 else { throw ValidationError("--duration must be at least 1 second, got \(duration)") }
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1, got \(rounds)") }
        guard warmup >= 0 else { throw ValidationError("--warmup must not be negative, got \(warmup)") }
        // wrk gives each thread its own connections, so it needs at least one per thread.
        guard threads >= 1, connections >= threads else {
            throw ValidationError("--threads must be at least 1 and --connections at least --threads, got \(threads) and \(connections)")
        }
        if poolMode == .statement {
            throw ValidationError("--pool-mode statement: a store runs no statement outside a transaction; name session or transaction")
        }
        guard FileManager.default.isExecutableFile(atPath: wrk) else {
            throw ValidationError("there is no wrk at \(wrk); install it (`apt-get install wrk`) or name it with --wrk")
        }
    }

    func run() async throws {
        postgres.apply()
        let logger = Logger.benchmark(level: logLevel)
        let models = try BookStoreModels.load()
        let metrics = noMetrics ? nil : ServiceMetrics()
        // As `bookstore serve` does: the process's one bootstrap.
        if let metrics { MetricsSystem.bootstrap(metrics.factory) }
        let load = WrkRunner(
            executable: wrk,
            threads: threads,
            connections: connections,
            duration: duration,
            warmup: warmup,
            books: books,
            rounds: rounds
        )
        for name in backend {
            let backend: any BenchmarkBackend =
                switch name {
                case .sqlite: try SQLiteBenchmarkBackend(folder: workFolder)
                case .postgres: PostgresBenchmarkBackend()
                }
            let result: HTTPBenchmarkResult
            do {
                result = try await HTTPBenchmark(
                    backend: backend,
                    models: models,
                    books: books,
                    load: load,
                    poolMode: poolMode,
                    metrics: metrics,
                    logger: logger
                ).run()
            } catch {
                await backend.removeAll()
                throw error
            }
            await backend.removeAll()
            result.printReport()
        }
    }
}

extension PostgresConfiguration.PoolMode: ExpressibleByArgument {}
