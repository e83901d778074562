import ArgumentParser
import BookStore
import CommandLineSupport

struct ResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Delete the store and create an empty one (refuses without --yes)."
    )

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Confirm that the store's data may be deleted.")
    var yes = false

    @Option(name: .long, help: "The model version of the new store; the current one by default.")
    var modelVersion: Int?

    @Flag(name: .long, help: "Seed the new store with the book's catalogue.")
    var seed = false

    func run() async throws {
        try await runReportingErrors(missingStore: BookStoreCommand.missingStoreHint) {
            let url = try options.storeURL()
            guard yes else {
                throw BookStoreError("reset deletes every row of \(url) and was not confirmed", hint: "run it again with --yes")
            }
            let logger = options.makeLogger()
            let models = try BookStoreModels.load()
            let version = modelVersion ?? models.versions.versions.count
            let summary = try await StoreAdministration(models: models, logger: logger)
                .reset(url, version: version, seed: seed ? try Catalogue.load() : nil)
            let contents = summary.map { "\($0.books) books, \($0.pages) pages" } ?? "empty"
            print("Reset \(url) to model version \(try models.model(version: version).name): \(contents).")
        }
    }
}
