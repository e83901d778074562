import Foundation

/// What a store remembers about the model that wrote it: the `Z_METADATA` plist.
///
/// Core Data keeps the entity version hashes (`NSStoreModelVersionHashes`), the model's
/// version identifiers, the store's UUID and type. ``ManagedObjectModel/isCompatible(with:)``
/// compares the hashes, as Core Data does.
///
/// ```swift
/// let metadata = try StoreMetadata.read(from: StoreURL("sqlite:///var/lib/bookstore.sqlite"))
/// model.isCompatible(with: metadata)
/// ```
public struct StoreMetadata: Sendable, Hashable {
    /// The metadata key of the entity version hashes (``versionHashes``).
    public static let versionHashesKey = "NSStoreModelVersionHashes"
    /// The metadata key of the model's version identifiers (``versionIdentifiers``).
    public static let versionIdentifiersKey = "NSStoreModelVersionIdentifiers"
    /// The metadata key of the store's UUID (``storeUUID``).
    public static let storeUUIDKey = "NSStoreUUID"
    /// The metadata key of the store's type (``storeType``).
    public static let storeTypeKey = "NSStoreType"
    /// The metadata key of the version of Core Data's hashing scheme; a store of ours writes 3.
    public static let hashesVersionKey = "NSStoreModelVersionHashesVersion"
    /// The name of the model version that wrote the store (ours; Core Data does not keep it).
    public static let modelVersionNameKey = "PersistenceModelVersionName"
    /// The metadata key of ``migratedBackFrom`` (ours).
    public static let migratedBackFromKey = "PersistenceMigratedBackFrom"

    /// Entity name → version hash.
    public var versionHashes: [String: Data]
    /// The model's `userDefinedModelVersionIdentifier`s (Core Data keeps a list).
    public var versionIdentifiers: [String]
    /// The store's identity, made when the store is created and kept by migrations and copies.
    public var storeUUID: String
    /// `SQLite`, `PostgreSQL` or `InMemory`.
    public var storeType: String
    /// The version name of the model that wrote the store, when a store of ours wrote it.
    public var modelVersionName: String?
    /// Keys this framework does not interpret, kept as they were (property-list values).
    public var additional: [String: PropertyListValue]

    /// Metadata with every value given; ``init(model:storeType:storeUUID:)`` makes it for a model.
    public init(
        versionHashes: [String: Data],
        versionIdentifiers: [String] = [],
        storeUUID: String = UUID().uuidString,
        storeType: String,
        modelVersionName: String? = nil,
        additional: [String: PropertyListValue] = [:]
    ) {
        self.versionHashes = versionHashes
        self.versionIdentifiers = versionIdentifiers
        self.storeUUID = storeUUID
        self.storeType = storeType
        self.modelVersionName = modelVersionName
        self.additional = additional
    }

    /// The version a migration back took the store from (``MigrationPlan/goesBack``): the
    /// newest it was at before a rollback; `nil` for a store never taken back, or taken
    /// forward since. Kept among ``additional``, so an earlier release that does not know
    /// it keeps it too. A service of the newer release that finds it does not take the
    /// store forward again at start-up unasked.
    ///
    /// ```swift
    /// let metadata = try await PersistentStore.metadata(at: url)
    /// metadata.migratedBackFrom // "BookStore 5", after `migrate --to "BookStore 4"`
    /// ```
    public var migratedBackFrom: String? {
        get {
            if case .string(let name) = additional[Self.migratedBackFromKey] { name } else { nil }
        }
        set { additional[Self.migratedBackFromKey] = newValue.map(PropertyListValue.string) }
    }

    /// Whether another framework wrote the store (Apple's Core Data): it carries no model
    /// version name of ours, and its version hashes are not ours to compute, so its version
    /// is recognised from its tables (``VersionedModel/recogniseVersion(ofStoreAt:named:)``).
    public var isForeign: Bool { modelVersionName == nil }

    /// Metadata for a store written by `model`.
    public init(model: ManagedObjectModel, storeType: String, storeUUID: String = UUID().uuidString) {
        self.init(
            versionHashes: model.entityVersionHashes,
            versionIdentifiers: [model.versionIdentifier],
            storeUUID: storeUUID,
            storeType: storeType,
            modelVersionName: model.name,
            additional: [Self.hashesVersionKey: .integer(3)]
        )
    }
}

extension ManagedObjectModel {
    /// Whether a store with this metadata can be opened with this model without migrating:
    /// the same entities with the same version hashes (Core Data's rule).
    public func isCompatible(with metadata: StoreMetadata) -> Bool {
        metadata.versionHashes == entityVersionHashes
    }
}
