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
    static let directMigrationHint =
        "give the migration a URL that reaches the server directly (or a pooler in session mode): --migration-store URL or BOOKSTORE_MIGRATION_STORE; the store was not changed"
}
