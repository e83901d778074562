import ArgumentParser

@main
struct BookStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookstore",
        abstract: "The BookStore backend: seed, inspect, migrate and reset its stores.",
        subcommands: [SeedCommand.self, StatusCommand.self, MigrateCommand.self, CopyCommand.self, ResetCommand.self]
    )
}
