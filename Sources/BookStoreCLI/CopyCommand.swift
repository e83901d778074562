import ArgumentParser
import BookStore
import CommandLineSupport
import Foundation
import Logging
import Persistence

struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a store to another backend (SQLite ↔ PostgreSQL), keeping its model version, rows and keys.",
        discussion:
            "An existing destination store is refused unless --replace; the copy is written in one transaction, so a failure leaves the destination as it was. Migrate the copy afterwards with `bookstore migrate --store <destination>`."
    )

    @Option(name: .long, help: ArgumentHelp("The store to copy.", valueName: "url"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("Where to write the copy.", valueName: "url"))
    var to: String

    @Flag(name: .long, help: "Replace a store that exists at the destination.")
    var replace = false

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        try await runReportingErrors(missingStore: BookStoreCommand.missingStoreHint) {
            let logger = CommandLogging.bootstrap(label: "bookstore", level: logLevel)
            let source = try StoreURL(from)
            let destination = try StoreURL(to)
            let summary = try await StoreCopy.copy(
                from: source,
                to: destination,
                versions: try BookStoreModels.load().versions,
                replace: replace,
                logger: logger
            )
            print("Copied \(source) to \(destination): model version \(summary.modelVersion), \(summary.totalRows) rows.")
        }
    }
}
