import ArgumentParser
import BookStore
import CommandLineSupport
import Foundation
import Logging
import Persistence

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store URL: sqlite:///path, sqlite://./relative.sqlite, postgres://user:password@host:port/database[?schema=NAME] or memory:.",
            valueName: "url"
        )
    )
    var store: String = ProcessInfo.processInfo.environment["BOOKSTORE_STORE"] ?? "sqlite://./bookstore.sqlite"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where migrations reach a PostgreSQL store when --store goes through a pooler in transaction mode (BOOKSTORE_MIGRATION_STORE): a URL to the server itself, or a pooler in session mode. A migration holds a session lock, which such a pooler cannot keep.",
            valueName: "url"
        )
    )
    // Empty: migrations go through --store.
    var migrationStore: String = ProcessInfo.processInfo.environment["BOOKSTORE_MIGRATION_STORE"] ?? ""

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func storeURL() throws -> StoreURL {
        try StoreURL(store)
    }

    /// Where migrations reach the store: `--migration-store`, else the store's own URL.
    ///
    /// - Throws: when the migration URL is not a PostgreSQL one or names another schema
    ///   than the store's: it must reach the same store.
    func migrationURL() throws -> StoreURL {
        let url = try storeURL()
        guard !migrationStore.isEmpty else { return url }
        let direct = try StoreURL(migrationStore)
        guard case .postgres(let pooled) = url.kind, case .postgres(let configuration) = direct.kind else {
            throw ValidationError(
                "--migration-store is for a PostgreSQL store reached through a pooler; both it and --store must be postgres:// URLs"
            )
        }
        guard pooled.schema == configuration.schema else {
            throw ValidationError(
                "--migration-store names the schema '\(configuration.schema)' and --store '\(pooled.schema)': both must reach the same store (?schema=NAME)"
            )
        }
        return direct
    }

    /// Sets up logging to standard error and returns the app's logger.
    func makeLogger() -> Logger {
        CommandLogging.bootstrap(label: "bookstore", level: logLevel)
    }
}
