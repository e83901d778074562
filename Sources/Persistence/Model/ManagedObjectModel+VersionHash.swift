import Foundation

extension ManagedObjectModel {
    /// The version hash of every entity, keyed by entity name (`NSStoreModelVersionHashes`).
    public var entityVersionHashes: [String: Data] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, versionHash(of: $0)) })
    }

    /// SHA-256 over the parts of the entity's description that affect storage.
    public func versionHash(of entity: EntityDescription) -> Data {
        Data(entity.name.utf8) // placeholder until the hashing lands
    }
}
