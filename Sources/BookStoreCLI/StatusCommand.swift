import ArgumentParser
import BookStore
import CommandLineSupport

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the store's model version, the app's current version, whether they are compatible and the pending migration steps."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReportingErrors(missingStore: BookStoreCommand.missingStoreHint) {
            let logger = options.makeLogger()
            let url = try options.storeURL()
            let status = try await StoreAdministration(models: try BookStoreModels.load(), logger: logger).status(of: url)
            print("Store:                 \(status.store)")
            print("Store model version:   \(status.storeModel.name)")
            print("Current model version: \(status.currentModel.name)")
            print("Compatible:            \(status.isCompatible ? "yes" : "no, the store needs migrating")")
            if let from = status.metadata.migratedBackFrom {
                print("Migrated back from:    \(from) (a rollback: the service does not migrate it forward at start-up; `bookstore migrate` does)")
            }
            if !status.pendingSteps.isEmpty {
                print("Pending steps:")
                for (index, step) in status.pendingSteps.enumerated() { print("  \(index + 1). \(step)") }
                print("Run `bookstore migrate` to migrate the store.")
            }
        }
    }
}
