import ArgumentParser
import CommandLineSupport
import BookStore
import BookStoreService
import Foundation

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the BookStore REST API, migrating the store to the current model first.",
        discussion: """
            The server listens at once; while the store is migrated, data requests get 503 with Retry-After and the \
            migration's progress, /health says "migrating" and /status shows a progress bar. SIGINT or SIGTERM stop it \
            gracefully: requests in flight finish, a migration in progress is cancelled and leaves the store as it was.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The address to listen on.")
    var host = ProcessInfo.processInfo.environment["BOOKSTORE_HOST"] ?? "127.0.0.1"

    @Option(name: .long, help: "The TCP port to listen on (0 picks a free one).")
    var port = Int(ProcessInfo.processInfo.environment["BOOKSTORE_PORT"] ?? "") ?? 8080

    @Option(name: .long, help: ArgumentHelp("Listen on this Unix domain socket instead of TCP.", valueName: "path"))
    var unixSocket: String?

    @Flag(name: .long, help: "Do not migrate an outdated store; answer 503 until another process (`bookstore migrate`) has.")
    var noMigrate = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, got \(port)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let logger = options.makeLogger()
            let configuration = ServiceConfiguration(
                store: try options.storeURL(), models: try BookStoreModels.load(),
                address: unixSocket.map { .unixSocket(path: $0) } ?? .tcp(host: host, port: port),
                migrate: !noMigrate)
            try await BookStoreService(configuration: configuration, logger: logger).run()
        }
    }
}
