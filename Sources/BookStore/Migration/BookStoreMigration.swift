import Logging
import Persistence

/// The pieces of BookStore's migrations put together: models, mapping models, policies.
///
/// ```swift
/// let migrator = try BookStoreMigration.migrator(models: try BookStoreModels.load(), logger: logger)
/// try await migrator.migrateStore(at: url)
/// ```
public enum BookStoreMigration {
    /// The policies BookStore's mapping models name.
    public static var policies: MigrationPolicies {
        var policies = MigrationPolicies()
        policies.register(PublicationToPublicationMigrationPolicy.self)
        return policies
    }

    /// The chain from `BookStore` to `BookStore 5`.
    public static func chain(models: BookStoreModels) throws -> MigrationChain {
        try MigrationChain(BookStoreVersion.self, models: models.versions, mappingModels: models.mappingModels, policies: policies)
    }

    /// The migrator of BookStore's chain: 1 → 2 → … → 5, with its mapping models, policy and manager.
    public static func migrator(models: BookStoreModels, logger: Logger) throws -> ProgressiveMigrator {
        ProgressiveMigrator(chain: try chain(models: models), logger: logger)
    }
}
