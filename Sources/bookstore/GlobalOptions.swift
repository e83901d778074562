import ArgumentParser
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
        Self.makeLogger(level: logLevel)
    }

    /// Sets up logging to standard error at `level` and returns the app's logger.
    static func makeLogger(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "bookstore")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Runs a command body, printing errors as one clear line and exiting non-zero.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        throw ExitCode.failure
    }
}
