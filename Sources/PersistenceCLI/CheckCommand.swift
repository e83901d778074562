import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that a store's tables, columns, types, entity numbers and indexes are what its model version creates.",
        discussion: """
            Recognises the store's model version as `inspect` does, then compares the store with what that \
            version creates, laid out with the store's own names and entity numbers: every table and column \
            with its type, Z_PRIMARYKEY, and the look-up, uniqueness-constraint and fetch indexes (not for a \
            store written by Apple's Core Data, which may lack some). Indexes and tables beside the model's are \
            noted, not counted. Migrations check every store a step writes the same way before it replaces the old \
            one. Exits non-zero when anything differs. Only reads the store.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The store URL: sqlite:///path or postgres://user@host/database[?schema=NAME].", valueName: "url"))
    var store: String

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String

    @Option(name: .long, help: ArgumentHelp("The store's model version, when its tables fit several.", valueName: "name"))
    var storeVersion: String?

    func run() async throws {
        try await runReportingErrors {
            try await PersistentStore.leavingFilesUntouched { try await check() }
        }
    }

    private func check() async throws {
        let logger = options.makeLogger()
        let url = try StoreURL(store)
        let metadata = try await PersistentStore.metadata(at: url)
        let versions = try loadModels(models)
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions), logger: logger)
        let recognised = try migrator.recognisedVersion(of: metadata, store: url, named: storeVersion)
        let found = try await PersistentStore.layoutDifferences(at: url, model: recognised.model)
        print("Store:          \(url)")
        print("Model version:  \(recognised.model.name)")
        print("Decided by:     \(InspectCommand.explain(recognised.method))")
        if !found.notes.isEmpty {
            print("Notes (these do not count):")
            for note in found.notes { print("  \(note)") }
        }
        guard !found.differences.isEmpty else {
            print("Layout:         as '\(recognised.model.name)' creates it")
            return
        }
        print("Layout:         differs from what '\(recognised.model.name)' creates:")
        for difference in found.differences { print("  \(difference)") }
        throw ExitCode.failure
    }
}
