import ArgumentParser
import CommandLineSupport
import Foundation
import Logging
import Persistence

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (logs go to standard error).")
    var logLevel: Logger.Level = .warning

    /// Sets up logging to standard error and returns the command's logger.
    func makeLogger() -> Logger {
        CommandLogging.bootstrap(label: "persistence", level: logLevel)
    }
}

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

/// The `.xcdatamodeld` folder a user named.
func loadModels(_ path: String) throws -> VersionedModel {
    try VersionedModel(contentsOf: URL(fileURLWithPath: path))
}
