import ArgumentParser
import BookStore
import BookStoreService
import CommandLineSupport
import CoreMetrics
import Foundation
import Persistence

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the BookStore REST API, migrating the store to the current model first.",
        discussion: """
            The server listens at once; while the store is migrated, data requests get 503 with Retry-After and the \
            migration's progress, /health says "migrating" and /status shows a progress bar. SIGINT or SIGTERM stop it \
            gracefully: requests in flight have --shutdown-grace to finish, a migration in progress is cancelled and leaves the store as it was. \
            A connection with no request is closed after --idle-timeout; a request whose head or body is slower than \
            --header-timeout or --body-timeout gets 408 and its connection is closed. \
            Writes (POST, PUT, PATCH, DELETE) need `Authorization: Bearer <key>` with a key of --write-key-file; without \
            one, anyone may write and the service listens on loopback or a Unix domain socket only, unless \
            --allow-anonymous-writes says that is deliberate. \
            GET /metrics answers in Prometheus' text format: requests by route, method and status with their durations, \
            the store's state and connections, and a migration's step, stage, fraction done, rows per second and time \
            left (--no-metrics turns it off).
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The address to listen on.")
    var host = ProcessInfo.processInfo.environment["BOOKSTORE_HOST"] ?? "127.0.0.1"

    @Option(name: .long, help: "The TCP port to listen on (0 picks a free one).")
    var port = Int(ProcessInfo.processInfo.environment["BOOKSTORE_PORT"] ?? "") ?? 8080

    @Option(name: .long, help: ArgumentHelp("Listen on this Unix domain socket instead of TCP.", valueName: "path"))
    var unixSocket: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A file of write keys, one per line (BOOKSTORE_WRITE_KEY_FILE): writes then need `Authorization: Bearer <key>` with one of them. Make one with `openssl rand -base64 32`.",
            valueName: "path"
        )
    )
    var writeKeyFile: String?

    /// --write-key-file, else BOOKSTORE_WRITE_KEY_FILE when set and not empty.
    private var keyFile: String? {
        writeKeyFile ?? ProcessInfo.processInfo.environment["BOOKSTORE_WRITE_KEY_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    @Flag(name: .long, help: "Let anyone who reaches the service write, even beyond loopback: for a deliberate demo only.")
    var allowAnonymousWrites = false

    @Flag(name: .long, help: "Do not migrate an outdated store; answer 503 until another process (`bookstore migrate`) has.")
    var noMigrate = false

    @Flag(
        name: .long,
        help: "Migrate an outdated PostgreSQL store online (BOOKSTORE_MIGRATE_ONLINE=1): the previous release's replicas keep serving it meanwhile."
    )
    var migrateOnline = false

    private var online: Bool {
        migrateOnline || ProcessInfo.processInfo.environment["BOOKSTORE_MIGRATE_ONLINE"] == "1"
    }

    @Flag(name: .long, help: "Serve no GET /metrics and record no request metrics (BOOKSTORE_METRICS=0).")
    var noMetrics = false

    private var servesMetrics: Bool {
        !noMetrics && ProcessInfo.processInfo.environment["BOOKSTORE_METRICS"] != "0"
    }

    @Option(name: .long, help: ArgumentHelp("Close a connection with no request under way after this long.", valueName: "seconds"))
    var idleTimeout = Self.seconds(HTTPTimeouts().idle)

    @Option(
        name: .long,
        help: ArgumentHelp("Answer 408 and close when a request's head takes longer than this from its first byte.", valueName: "seconds")
    )
    var headerTimeout = Self.seconds(HTTPTimeouts().requestHead)

    @Option(
        name: .long,
        help: ArgumentHelp("Answer 408 and close when a request's body takes longer than this after its head.", valueName: "seconds")
    )
    var bodyTimeout = Self.seconds(HTTPTimeouts().requestBody)

    @Option(name: .long, help: ArgumentHelp("On SIGINT or SIGTERM, cut requests still in flight after this long.", valueName: "seconds"))
    var shutdownGrace = Self.seconds(HTTPTimeouts().shutdownGrace)

    func validate() throws {
        if keyFile != nil, allowAnonymousWrites {
            throw ValidationError(
                "--allow-anonymous-writes and a write key file (--write-key-file or BOOKSTORE_WRITE_KEY_FILE) contradict each other; give one"
            )
        }
        if online, noMigrate {
            throw ValidationError("--migrate-online (or BOOKSTORE_MIGRATE_ONLINE=1) and --no-migrate contradict each other; give one")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, got \(port)") }
        for (name, value) in [
            ("--idle-timeout", idleTimeout), ("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout),
            ("--shutdown-grace", shutdownGrace),
        ] {
            guard value >= 0.001, value <= 86_400 else { throw ValidationError("\(name) must be from 0.001 to 86400 seconds, got \(value)") }
        }
    }

    /// Who may write: the keys of the file, anyone when asked, else anyone on loopback.
    private func writeAccess() throws -> WriteAccess {
        if let keyFile { return .keys(try WriteKeys(contentsOfFile: keyFile)) }
        return allowAnonymousWrites ? .anonymous : .anonymousOnLoopback
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private var timeouts: HTTPTimeouts {
        HTTPTimeouts(
            idle: .seconds(idleTimeout),
            requestHead: .seconds(headerTimeout),
            requestBody: .seconds(bodyTimeout),
            shutdownGrace: .seconds(shutdownGrace)
        )
    }

    func run() async throws {
        try await runReportingErrors(missingStore: BookStoreCommand.missingStoreHint, directMigration: BookStoreCommand.directMigrationHint) {
            let logger = options.makeLogger()
            let metrics = servesMetrics ? ServiceMetrics() : nil
            // The process's one bootstrap: the request metrics then land where /metrics reads.
            if let metrics { MetricsSystem.bootstrap(metrics.factory) }
            let configuration = ServiceConfiguration(
                store: try options.storeURL(),
                migrationStore: try options.migrationURL(),
                models: try BookStoreModels.load(),
                address: unixSocket.map { .unixSocket(path: $0) } ?? .tcp(host: host, port: port),
                writeAccess: try writeAccess(),
                migrate: !noMigrate,
                onlineMigration: online ? OnlineMigrationOptions() : nil,
                timeouts: timeouts,
                metrics: metrics
            )
            try await BookStoreService(configuration: configuration, logger: logger).run()
        }
    }
}
