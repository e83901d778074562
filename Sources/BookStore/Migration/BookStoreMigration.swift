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
        policies.register(PublicationJoiningNamesMigrationPolicy.self)
        return policies
    }

    /// How the chain's hooks (the author split, the synopsis) are given their instances.
    public enum Hooks: String, Sendable, CaseIterable {
        /// As BookStore ships: the hooks declare the values they read and set
        /// (``Persistence/DeclaredValues``), so the steps run as SQL with only those values
        /// through Swift.
        case declaredValues = "declared-values"
        /// As before the hooks declared their values: whole objects, one by one. The same
        /// rows come out, more slowly; for comparison, and for what only that path does
        /// (passes of steps fused in memory).
        case wholeObjects = "whole-objects"
    }

    /// The chain from `BookStore` to `BookStore 5`.
    public static func chain(models: BookStoreModels, hooks: Hooks = .declaredValues) throws -> MigrationChain {
        switch hooks {
        case .declaredValues:
            try MigrationChain(BookStoreVersion.self, models: models.versions, mappingModels: models.mappingModels, policies: policies)
        case .wholeObjects:
            try MigrationChain(
                WholeObjectHooks.Version.self,
                models: models.versions,
                mappingModels: models.mappingModels,
                policies: WholeObjectHooks.policies
            )
        }
    }

    /// The migrator of BookStore's chain: 1 → 2 → … → 5, with its mapping models, policy and manager.
    public static func migrator(models: BookStoreModels, hooks: Hooks = .declaredValues, logger: Logger) throws -> ProgressiveMigrator {
        ProgressiveMigrator(chain: try chain(models: models, hooks: hooks), logger: logger)
    }
}
