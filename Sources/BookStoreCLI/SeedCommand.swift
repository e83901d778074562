import ArgumentParser
import BookStore
import CommandLineSupport

struct SeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Create a store at a model version holding the book's catalogue.",
        discussion: "The store must not exist yet; use `reset --yes --seed` to replace one."
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The model version to write (1 to 5); the current one by default.")
    var modelVersion: Int?

    @Option(name: .long, help: "How many generated books to add (each with two pages).")
    var count: Int = 0

    func run() async throws {
        try await runReportingErrors(missingStore: BookStoreCommand.missingStoreHint) {
            let logger = options.makeLogger()
            let url = try options.storeURL()
            let models = try BookStoreModels.load()
            let version = modelVersion ?? models.versions.versions.count
            guard count >= 0 else { throw ValidationError("--count must not be negative") }
            let summary = try await StoreAdministration(models: models, logger: logger)
                .seed(url, version: version, count: count, catalogue: try Catalogue.load())
            print("Seeded \(url) at model version \(try models.model(version: version).name): \(summary.books) books, \(summary.pages) pages.")
        }
    }
}
