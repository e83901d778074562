import ArgumentParser
import Foundation
import Logging
import Persistence

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (logs go to standard error).")
    var logLevel: Logger.Level = .warning

    /// Sets up logging to standard error and returns the command's logger.
    func makeLogger() -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        return Logger(label: "persistence")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A problem the command reports itself, with what to do.
struct CommandError: Error, CustomStringConvertible {
    let message: String
    let hint: String

    init(_ message: String, hint: String) {
        self.message = message
        self.hint = hint
    }

    var description: String { "\(message). \(hint.prefix(1).uppercased())\(hint.dropFirst())" }
}

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

/// The `.xcdatamodeld` folder a user named.
func loadModels(_ path: String) throws -> VersionedModel {
    try VersionedModel(contentsOf: URL(fileURLWithPath: path))
}
