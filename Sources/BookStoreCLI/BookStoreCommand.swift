import ArgumentParser

@main
struct BookStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookstore",
        abstract: "The BookStore backend: serve its REST API; seed, inspect, migrate and reset its stores.",
        subcommands: [ServeCommand.self, SeedCommand.self, StatusCommand.self, MigrateCommand.self, CopyCommand.self, ResetCommand.self]
    )

    /// What to do about a store that is not there, in this tool's terms.
    static let missingStoreHint = "check --store, or create the store with `bookstore seed`"
}
