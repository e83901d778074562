import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store from its version to the current one (or --to a given one), as Core Data does, or through --chain.",
        discussion: """
            As Core Data migrates, the versions have no order: the store's version is found by its hashes \
            and the store migrates straight to the target in one step, by the mapping files in --mappings \
            that map the two versions or by an inferred mapping; where no file maps the two but the files lead \
            from one to the other (v1 to v2, v2 to v3, …), through those. With --chain the store goes through \
            the versions named, in that order, each step by its mapping files or inferred. --plan says which. Steps that need Swift (a custom entity migration policy) cannot run here and are refused \
            before anything changes: run them from the app that registers the policy. With --plan it lists \
            the steps, how each runs and what each drops (with the rows concerned, counted on the store where the steps before carry them unchanged), and changes nothing. A --to \
            earlier than the store's version migrates it back, walking the way forward backwards: each step back by the mapping \
            files that map it (newer to older) or as the inverse of a step that only added or renamed; a step back that drops \
            data (what the later version added) runs only with --accept-data-loss, after the plan has said what. A failed or interrupted migration leaves a SQLite store as it was and a PostgreSQL \
            store at its last completed step. SIGINT or SIGTERM cancel it: the running statement is interrupted, the \
            migration's work removed, the store's version printed, and the command exits with 130 or 143; a second \
            signal stops it at once, the store still whole. With --online (PostgreSQL) other processes keep \
            reading and writing the store at its version while it migrates, held off only for the cut-over.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String

    @Option(name: .long, help: ArgumentHelp("The folder of mapping models: *.json files and Xcode's *.xcmappingmodel folders.", valueName: "dir"))
    var mappings: String?

    @Option(name: .long, help: ArgumentHelp("The store URL: sqlite:///path or postgres://user@host/database[?schema=NAME].", valueName: "url"))
    var store: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The model version to migrate to: a name (\"Shop 3\") or a number (3); the current version by default.",
            valueName: "version"
        )
    )
    var to: String?

    @Option(name: .long, help: ArgumentHelp("Source instances a streamed step reads, creates and saves at a time.", valueName: "count"))
    var batchSize: Int = 1_000

    @Option(
        name: .long,
        help: ArgumentHelp("The store's model version, for a store of Apple's Core Data whose tables fit several.", valueName: "name")
    )
    var storeVersion: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The versions a store goes through, in the order the app shipped them: names or numbers, comma-separated (\"1,2,10\").",
            valueName: "versions"
        )
    )
    var chain: String?

    @Flag(name: .long, help: "List the steps without running them.")
    var plan = false

    @Flag(
        name: .long,
        help:
            "Run a migration back to an older version (--to) that drops data: what the later versions added. Without it such a migration only says what it would drop."
    )
    var acceptDataLoss = false

    @OptionGroup var online: OnlineMigrationArguments

    func run() async throws {
        try await runReportingErrors {
            let logger = options.makeLogger()
            let url = try StoreURL(store)
            let versions = try loadModels(models)
            let mappingModels = try mappings.map { try MappingModel.load(directory: URL(fileURLWithPath: $0), versions: versions) } ?? []
            guard batchSize > 0 else {
                throw CommandError("--batch-size must be at least 1, not \(batchSize)", hint: "pass a positive number, such as 1000")
            }
            let migrationChain =
                try chain.map { list in
                    try MigrationChain(
                        models: versions,
                        through: list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
                        mappingModels: mappingModels
                    )
                } ?? MigrationChain(models: versions, mappingModels: mappingModels)
            let migrator = ProgressiveMigrator(chain: migrationChain, batchSize: batchSize, logger: logger)
            var steps = try await migrator.plan(forStoreAt: url, to: to, storeVersion: storeVersion)
            // The warnings counted on the store where they can be, for a plan shown before deciding.
            if plan || steps.goesBack { steps = try await steps.countingAffectedRows(in: url, logger: logger) }
            steps.printSummary(of: url)
            // A current store still goes through the migrator: what a killed run left beside
            // it is removed then.
            if steps.isEmpty {
                if !plan { _ = try await migrator.migrateStore(at: url, to: to, storeVersion: storeVersion) }
                return
            }
            let needsSwift = steps.steps.enumerated().filter { !$0.element.mappingModels.flatMap(\.policyNames).isEmpty }
            if let (index, step) = needsSwift.first {
                let policies = step.mappingModels.flatMap(\.policyNames).map { "'\($0)'" }.joined(separator: ", ")
                let files = step.mappingModels.compactMap(\.file).joined(separator: ", ")
                let error = CommandError(
                    "step \(index + 1), \(step.source.name) → \(step.destination.name), needs the custom entity migration policy \(policies) (named in \(files)), which is Swift code this command does not have",
                    hint:
                        "run that step from the app that registers the policy (ProgressiveMigrator with MigrationPolicies); the store was not changed"
                )
                if plan {
                    print("Cannot run here: \(error)")
                    return
                }
                throw error
            }
            if plan { return }
            let started = ContinuousClock.now
            let (to, storeVersion, onlineOptions, acceptDataLoss) = (to, storeVersion, online.options(), acceptDataLoss)
            let ran = try await migratingUntilSignalled(standing: { try? await migrator.plan(forStoreAt: url, to: to, storeVersion: storeVersion) }) {
                if let onlineOptions {
                    return try await migrator.migrateStoreOnline(at: url, to: to, storeVersion: storeVersion, options: onlineOptions)
                }
                return try await withDataLossFlagHint {
                    try await migrator.migrateStore(at: url, to: to, storeVersion: storeVersion, acceptingDataLoss: acceptDataLoss)
                }
            }
            ran.printOutcome(of: url, since: started)
        }
    }
}
