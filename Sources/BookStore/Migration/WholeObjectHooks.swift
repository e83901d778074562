import Persistence

/// BookStore's chain as it ran before its hooks declared their values: the author split and
/// the synopsis given whole objects, one instance at a time. The same rows come out; the
/// benchmark weighs the two ways against each other, and the tests of fused passes run on it.
enum WholeObjectHooks {
    /// The policy without its declaration: its hook is given whole publications.
    final class Policy: PublicationToPublicationMigrationPolicy, @unchecked Sendable {
        override class var declaredValues: DeclaredValues? { nil }
    }

    /// The manager without its declaration: its association hook is given whole pairs.
    final class Manager: SynopsisMigrationManager, @unchecked Sendable {
        override func declaredAssociationValues(for mapping: EntityMapping) -> DeclaredValues? { nil }
    }

    /// BookStore's versions with ``Manager`` for version 5's step.
    enum Version: String, MigrationVersion, CaseIterable {
        case v1 = "BookStore"
        case v2 = "BookStore 2"
        case v3 = "BookStore 3"
        case v4 = "BookStore 4"
        case v5 = "BookStore 5"

        var modelName: String { rawValue }

        func nextVersion() -> Version? {
            BookStoreVersion(rawValue: rawValue)?.nextVersion().flatMap { Version(rawValue: $0.rawValue) }
        }

        var migrationManagerType: MigrationManager.Type {
            self == .v5 ? Manager.self : MigrationManager.self
        }
    }

    static var policies: MigrationPolicies {
        var policies = MigrationPolicies()
        policies.register(Policy.self, as: String(describing: PublicationToPublicationMigrationPolicy.self))
        policies.register(PublicationJoiningNamesMigrationPolicy.self)
        return policies
    }
}
