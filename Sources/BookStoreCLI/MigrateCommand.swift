import ArgumentParser
import BookStore
import CommandLineSupport
import Foundation
import Persistence

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the current model version (or --to a given one, later or earlier), step by step.",
        discussion:
            "With --plan it lists the steps, how each runs and what each drops (with the rows concerned, counted on the store where the steps before carry them unchanged), and changes nothing. A failed or interrupted migration leaves the store as it was (on PostgreSQL, at its last completed step). SIGINT or SIGTERM cancel it: the running statement is interrupted, the migration's work removed, the store's version printed, and the command exits with 130 or 143; a second signal stops it at once, the store still whole. A migration back to an earlier version (--to) runs each step back by its mapping model (BookStore ships the one that joins the author's names again) or as the inverse of a step that only added or renamed; one that drops data (the synopses, going back to 4) says how many rows it drops and runs only with --accept-data-loss. With --online (PostgreSQL) the previous release keeps reading and writing the store while it migrates, and is held off only for the cut-over."
    )

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "List the steps without running them.")
    var plan = false

    @Option(name: .long, help: ArgumentHelp("The model version to migrate to: a number (3) or a name (\"BookStore 3\").", valueName: "version"))
    var to: String?

    @Flag(
        name: .long,
        help:
            "Run a migration back to an older version (--to) that drops data: what the later versions added. Without it such a migration only says what it would drop."
    )
    var acceptDataLoss = false

    @OptionGroup var online: OnlineMigrationArguments

    func run() async throws {
        try await runReportingErrors(missingStore: BookStoreCommand.missingStoreHint, directMigration: BookStoreCommand.directMigrationHint) {
            let logger = options.makeLogger()
            // The whole command over the migration's URL: it holds the lock, and the plan
            // it prints is the one it runs.
            let url = try options.migrationURL()
            let administration = StoreAdministration(models: try BookStoreModels.load(), logger: logger)
            // Named even when it is the current version: a store taken back on purpose is
            // taken forward again by this command, asked for, not by a service's start-up.
            let target = try to.map { try administration.versionName($0) } ?? administration.models.current.name
            var steps = try await administration.migrationPlan(for: url, to: target)
            // The warnings counted on the store where they can be, for a plan shown before deciding.
            if plan || steps.goesBack { steps = try await steps.countingAffectedRows(in: url, logger: logger) }
            steps.printSummary(of: url)
            if plan { return }
            // A current store still goes through the migrator: what a killed run left beside
            // it is removed then.
            if steps.isEmpty {
                _ = try await administration.migrate(url, to: target)
                return
            }
            let bar = ProgressBar.forStandardError()
            // Whatever happens, what is printed next starts on a line of its own.
            defer { bar?.finish() }
            let started = ContinuousClock.now
            let (onlineOptions, acceptDataLoss) = (online.options(), acceptDataLoss)
            let ran = try await migratingUntilSignalled(standing: { try? await administration.migrationPlan(for: url, to: target) }) {
                try await withDataLossFlagHint {
                    try await administration.migrate(url, to: target, online: onlineOptions, acceptingDataLoss: acceptDataLoss) { bar?.show($0) }
                }
            }
            bar?.finish()
            ran.printOutcome(of: url, since: started)
        }
    }
}
