import Crypto
import Foundation

extension ManagedObjectModel {
    /// The version hash of every entity, keyed by entity name (`NSStoreModelVersionHashes`).
    ///
    /// ```swift
    /// let metadata = StoreMetadata(versionHashes: model.entityVersionHashes, storeType: "SQLite")
    /// ```
    public var entityVersionHashes: [String: Data] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, versionHash(of: $0)) })
    }

    /// SHA-256 over the parts of the entity's description that affect storage, like Core
    /// Data's `versionHash`.
    ///
    /// It covers the entity's name, abstract flag, parent name and version hash modifier,
    /// and each stored (non-transient) property, inherited ones included, sorted by name:
    /// its name, whether it is an attribute or a relationship, the attribute type or the
    /// relationship's destination, to-many and ordered flags, its optionality and version
    /// hash modifier.
    ///
    /// As in Core Data, renaming identifiers, default values, minimum and maximum values,
    /// delete rules, counts, user info, the represented class name and transient
    /// properties do **not** change the hash: a model that differs only in those opens the
    /// same store without a migration. Change a `versionHashModifier` to force one.
    ///
    /// ```swift
    /// let hash = model.versionHash(of: model.entity(named: "Book")!) // 32 bytes
    /// ```
    public func versionHash(of entity: EntityDescription) -> Data {
        var encoder = VersionHashEncoder()
        // A format tag, so that a future change to this encoding can never collide with it.
        encoder.string("Persistence.EntityVersionHash.1")
        encoder.string(entity.name)
        encoder.bool(entity.isAbstract)
        encoder.optional(entity.parentName)
        encoder.optional(entity.versionHashModifier)

        var properties: [(name: String, encode: (inout VersionHashEncoder) -> Void)] = []
        for attribute in attributes(of: entity) where !attribute.isTransient {
            properties.append(
                (
                    attribute.name,
                    { encoder in
                        encoder.string("attribute")
                        encoder.string(attribute.type.rawValue)
                        encoder.bool(attribute.isOptional)
                        encoder.optional(attribute.versionHashModifier)
                    }
                )
            )
        }
        for relationship in relationships(of: entity) where !relationship.isTransient {
            properties.append(
                (
                    relationship.name,
                    { encoder in
                        encoder.string("relationship")
                        encoder.string(relationship.destinationEntityName)
                        encoder.bool(relationship.isToMany)
                        encoder.bool(relationship.isOrdered)
                        encoder.bool(relationship.isOptional)
                        encoder.optional(relationship.versionHashModifier)
                    }
                )
            )
        }
        properties.sort { $0.name < $1.name }
        encoder.count(properties.count)
        for property in properties {
            encoder.string(property.name)
            property.encode(&encoder)
        }
        return Data(SHA256.hash(data: encoder.bytes))
    }
}

/// An unambiguous byte encoding: every string is prefixed with its length, so that no two
/// different descriptions encode to the same bytes ("ab" + "c" ≠ "a" + "bc").
struct VersionHashEncoder {
    private(set) var bytes: [UInt8] = []

    mutating func count(_ value: Int) {
        withUnsafeBytes(of: UInt64(value).bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        count(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    mutating func bool(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    mutating func optional(_ value: String?) {
        if let value {
            bytes.append(1)
            string(value)
        } else {
            bytes.append(0)
        }
    }
}
