import Persistence

/// BookStore's released model versions and the chain a store migrates along.
///
/// ```swift
/// BookStoreVersion.v3.nextVersion() // .v4
/// ```
public enum BookStoreVersion: String, MigrationVersion, CaseIterable {
    /// The first release: books and their pages, no author.
    case v1 = "BookStore"
    /// Adds the book's `author`, one string.
    case v2 = "BookStore 2"
    /// Renames `Book` to `Publication` and `Page.book` to `Page.publication`.
    case v3 = "BookStore 3"
    /// Splits the author into `firstName` and `lastName`, through a migration policy.
    case v4 = "BookStore 4"
    /// Adds `Publication.synopsis`, filled in by the step's migration manager: the current version.
    case v5 = "BookStore 5"

    /// The model version's name in the `.xcdatamodeld`: `BookStore 3`.
    public var modelName: String { rawValue }

    /// The version after this one; `nil` for the current one.
    public func nextVersion() -> BookStoreVersion? {
        switch self {
        case .v1: .v2
        case .v2: .v3
        case .v3: .v4
        case .v4: .v5
        case .v5: nil
        }
    }

    /// Version 5's step runs through the manager that fills in the synopsis.
    public var migrationManagerType: MigrationManager.Type {
        self == .v5 ? SynopsisMigrationManager.self : MigrationManager.self
    }
}
