import ArgumentParser
import BookStore

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the store's model version, the app's current version and whether they are compatible."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReportingErrors {
            let logger = options.makeLogger()
            let url = try options.storeURL()
            let status = try await StoreAdministration(models: try BookStoreModels.load(), logger: logger).status(of: url)
            print("Store:                 \(status.store)")
            print("Store model version:   \(status.storeModel.name)")
            print("Current model version: \(status.currentModel.name)")
            print("Compatible:            \(status.isCompatible ? "yes" : "no, the store needs migrating")")
        }
    }
}
