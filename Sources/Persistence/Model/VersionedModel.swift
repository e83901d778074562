import Foundation

/// All versions of a model, loaded from an Xcode `.xcdatamodeld` folder, and which one is current.
///
/// ```swift
/// let versions = try VersionedModel(contentsOf: URL(fileURLWithPath: "Migrations/BookStore.xcdatamodeld"))
/// versions.current.name // "BookStore 5"
/// ```
public struct VersionedModel: Sendable, Hashable {
    /// The model's name, e.g. `BookStore` (the `.xcdatamodeld` folder name without extension).
    public let name: String
    /// Every version, in the order of their names (`BookStore`, `BookStore 2`, …).
    public let versions: [ManagedObjectModel]
    /// The version `.xccurrentversion` names.
    public let current: ManagedObjectModel

    public init(name: String, versions: [ManagedObjectModel], currentVersionName: String) throws(ModelError) {
        guard let current = versions.first(where: { $0.name == currentVersionName }) else {
            throw ModelError(.unknownVersion, "the current version '\(currentVersionName)' is not among the model's versions")
        }
        self.name = name
        self.versions = versions
        self.current = current
    }

    /// Loads every `.xcdatamodel` in the folder and reads `.xccurrentversion`.
    public init(contentsOf url: URL) throws(ModelError) {
        throw ModelError(.missingFile, "not implemented yet", file: url.path)
    }

    /// The version with this name (`BookStore 3`).
    public func version(named name: String) -> ManagedObjectModel? {
        versions.first { $0.name == name }
    }

    /// The version whose entity hashes match the store's metadata, if any.
    public func version(matching metadata: StoreMetadata) -> ManagedObjectModel? {
        versions.first { $0.isCompatible(with: metadata) }
    }
}
