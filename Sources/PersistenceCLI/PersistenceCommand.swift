import ArgumentParser

/// `persistence`: the framework's stores and migrations for those who have the model files
/// and mapping files but no Swift code of their own.
@main
struct PersistenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "persistence",
        abstract: "Inspect, migrate and validate Core Data–style stores, models and mapping files.",
        subcommands: [
            InspectCommand.self, CheckCommand.self, MigrateCommand.self, CopyCommand.self, FixtureCommand.self, ValidateCommand.self,
            LockCommand.self,
        ]
    )
}
