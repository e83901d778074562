import ArgumentParser
import CommandLineSupport
import BookStore
import Foundation
import Logging
import Persistence

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store URL: sqlite:///path, sqlite://./relative.sqlite, postgres://user:password@host:port/database[?schema=NAME] or memory:.", valueName: "url"))
    var store: String = ProcessInfo.processInfo.environment["BOOKSTORE_STORE"] ?? "sqlite://./bookstore.sqlite"

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func storeURL() throws -> StoreURL {
        try StoreURL(store)
    }

    /// Sets up logging to standard error and returns the app's logger.
    func makeLogger() -> Logger {
        CommandLogging.bootstrap(label: "bookstore", level: logLevel)
    }
}
