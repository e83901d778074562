import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a store to another place or backend (SQLite ↔ PostgreSQL), keeping its model version, rows and keys.",
        discussion: """
            The store's version is recognised with --models (by its version hashes or, for a store of \
            Apple's Core Data, by its tables). An existing destination store is refused unless --replace; \
            the copy is written in one transaction, so a failure leaves the destination as it was. \
            Migrate the copy afterwards with `persistence migrate --store <destination>`.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String

    @Option(name: .long, help: ArgumentHelp("The store to copy.", valueName: "url"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("Where to write the copy.", valueName: "url"))
    var to: String

    @Option(
        name: .long,
        help: ArgumentHelp("The store's model version, for a store of Apple's Core Data whose tables fit several.", valueName: "name")
    )
    var storeVersion: String?

    @Flag(name: .long, help: "Replace a store that exists at the destination.")
    var replace = false

    func run() async throws {
        try await runReportingErrors {
            let logger = options.makeLogger()
            let source = try StoreURL(from)
            let destination = try StoreURL(to)
            let summary = try await StoreCopy.copy(
                from: source,
                to: destination,
                versions: try loadModels(models),
                replace: replace,
                storeVersion: storeVersion,
                logger: logger
            )
            print("Copied \(source) to \(destination): model version \(summary.modelVersion), \(summary.totalRows) rows.")
        }
    }
}
