import ArgumentParser
import Foundation
import Logging
import Persistence

/// Logging for the project's commands: everything to standard error, at the level the
/// user asked for with `--log-level`; on a terminal, above the progress bar.
public enum CommandLogging {
    /// Sets up logging to standard error at `level` and returns the command's logger.
    ///
    /// ```swift
    /// let logger = CommandLogging.bootstrap(label: "bookstore", level: .info)
    /// ```
    public static func bootstrap(label: String, level: Logger.Level) -> Logger {
        // On a terminal, log lines go above the progress bar rather than into it.
        let terminal = isatty(STDERR_FILENO) == 1
        LoggingSystem.bootstrap { label in
            var handler =
                terminal
                ? StreamLogHandler(label: label, stream: TerminalStatusLineStream(terminal: .standardError))
                : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Runs a command's body, printing an error as one clear line on standard error and
/// exiting non-zero. `missingStore` is what the tool's user can do about a store that is
/// not there (its own command that creates one), in place of the framework's hint;
/// `directMigration`, how the tool takes a URL for migrations when the store's goes
/// through a pooler in transaction mode (``MigrationError/Code/needsDirectConnection``).
///
/// ```swift
/// func run() async throws {
///     try await runReportingErrors(missingStore: "create it with `bookstore seed`") { try await migrate() }
/// }
/// ```
public func runReportingErrors(missingStore: String? = nil, directMigration: String? = nil, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch var error as MigrationError where error.code == .needsDirectConnection && directMigration != nil {
        error.hint = directMigration
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        throw ExitCode.failure
    } catch var error as StoreError where error.code == .storeNotFound && missingStore != nil {
        error.hint = missingStore
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        throw ExitCode.failure
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        throw ExitCode.failure
    }
}
