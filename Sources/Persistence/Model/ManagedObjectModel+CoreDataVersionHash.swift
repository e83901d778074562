import Crypto
import Foundation

extension ManagedObjectModel {
    /// The version hash Apple's Core Data gives each entity (`NSEntityDescription.versionHash`),
    /// keyed by entity name: what a store Core Data wrote carries in its metadata
    /// (`NSStoreModelVersionHashes`), so a store of Apple's is known by the version that wrote
    /// it exactly, not only by its tables.
    ///
    /// Every hash is SHA-256 over bytes laid out as every Apple-written store in
    /// `Tests/Fixtures/CoreData` shows (strings as their UTF-8 bytes, nothing between them;
    /// integers little-endian; what is absent adds nothing):
    /// - a property: its name, then 2 bytes of flags (1 optional, 2 transient), then its
    ///   version hash modifier — the *base*;
    /// - an attribute: the base's 32 bytes, the attribute type's `NSAttributeType` number in
    ///   4 bytes, a byte 1 if it allows external storage, a byte 1 if it preserves its value
    ///   after deletion;
    /// - a relationship: the base's 32 bytes, the destination's name, the inverse's name
    ///   (none for a relationship that is its own inverse), the maximum count in 4 bytes (0 for
    ///   an unbounded to-many, 1 for a to-one), the minimum count in 4 bytes, and `01 00` if it
    ///   is ordered;
    /// - an entity: its name, a byte for abstract, its parent's entity hash, the hash of each
    ///   stored property (inherited ones too) in name order (UTF-16 code units), its version
    ///   hash modifier, and its own uniqueness constraints, each one's names joined with ".",
    ///   in name order.
    ///
    /// Renaming identifiers, defaults, validation, delete rules, indexes and fetch indexes do
    /// not count, as in ``versionHash(of:)``.
    ///
    /// ```swift
    /// let hashes = model.coreDataEntityVersionHashes
    /// hashes == metadata.versionHashes // true for the store the model's version wrote
    /// ```
    public var coreDataEntityVersionHashes: [String: Data] {
        var cache: [String: Data] = [:]
        return Dictionary(uniqueKeysWithValues: entities.map { ($0.name, coreDataVersionHash(of: $0, cache: &cache)) })
    }

    private func coreDataVersionHash(of entity: EntityDescription, cache: inout [String: Data]) -> Data {
        if let hash = cache[entity.name] { return hash }
        var bytes = Array(entity.name.utf8)
        bytes.append(entity.isAbstract ? 1 : 0)
        if let parent = entity.parentName.flatMap(self.entity(named:)) {
            bytes += coreDataVersionHash(of: parent, cache: &cache)
        }
        // Own properties replace inherited ones of the same name.
        var properties: [String: [UInt8]] = [:]
        for owner in ancestors(of: entity).reversed() + [entity] {
            for attribute in owner.attributes {
                properties[attribute.name] = attribute.isTransient ? nil : Self.coreDataHash(of: attribute)
            }
            for relationship in owner.relationships {
                properties[relationship.name] = relationship.isTransient ? nil : coreDataHash(of: relationship, in: entity)
            }
        }
        for name in properties.keys.sorted(by: Self.utf16Precedes) { bytes += properties[name]! }
        bytes += Array((entity.versionHashModifier ?? "").utf8)
        for constraint in entity.uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted(by: Self.utf16Precedes) {
            bytes += Array(constraint.utf8)
        }
        let hash = Data(SHA256.hash(data: bytes))
        cache[entity.name] = hash
        return hash
    }

    /// `NSString`'s literal order: by UTF-16 code unit.
    private static func utf16Precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }

    private static func baseHash(name: String, isOptional: Bool, isTransient: Bool, versionHashModifier: String?) -> [UInt8] {
        var bytes = Array(name.utf8)
        bytes += littleEndian(UInt16((isOptional ? 1 : 0) | (isTransient ? 2 : 0)))
        bytes += Array((versionHashModifier ?? "").utf8)
        return Array(SHA256.hash(data: bytes))
    }

    private static func coreDataHash(of attribute: AttributeDescription) -> [UInt8] {
        var bytes = baseHash(
            name: attribute.name,
            isOptional: attribute.isOptional,
            isTransient: attribute.isTransient,
            versionHashModifier: attribute.versionHashModifier
        )
        bytes += littleEndian(attribute.type.coreDataAttributeType)
        if attribute.allowsExternalBinaryDataStorage { bytes.append(1) }
        if attribute.preservesValueAfterDeletion { bytes.append(1) }
        return Array(SHA256.hash(data: bytes))
    }

    private func coreDataHash(of relationship: RelationshipDescription, in entity: EntityDescription) -> [UInt8] {
        var bytes = Self.baseHash(
            name: relationship.name,
            isOptional: relationship.isOptional,
            isTransient: relationship.isTransient,
            versionHashModifier: relationship.versionHashModifier
        )
        bytes += Array(relationship.destinationEntityName.utf8)
        if let inverse = relationship.inverseName, !isOwnInverse(relationship, in: entity) { bytes += Array(inverse.utf8) }
        let maximum = relationship.isToMany ? relationship.maxCount : max(relationship.maxCount, 1)
        bytes += Self.littleEndian(UInt32(truncatingIfNeeded: maximum))
        bytes += Self.littleEndian(UInt32(truncatingIfNeeded: relationship.minCount))
        if relationship.isOrdered { bytes += Self.littleEndian(UInt16(1)) }
        return Array(SHA256.hash(data: bytes))
    }

    /// Whether the relationship, where an entity declares it, names itself as its inverse.
    private func isOwnInverse(_ relationship: RelationshipDescription, in entity: EntityDescription) -> Bool {
        guard let declaring = declaringEntity(ofRelationship: relationship.name, from: entity),
            let declared = declaring.relationship(named: relationship.name)
        else { return false }
        return declared.inverseName == declared.name && declared.destinationEntityName == declaring.name
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}

extension AttributeType {
    /// Core Data's number for the type (`NSAttributeType`).
    var coreDataAttributeType: UInt32 {
        switch self {
        case .integer16: 100
        case .integer32: 200
        case .integer64: 300
        case .decimal: 400
        case .double: 500
        case .float: 600
        case .string: 700
        case .boolean: 800
        case .date: 900
        case .binary: 1000
        case .uuid: 1100
        case .uri: 1200
        case .transformable: 1800
        case .undefined: 0
        }
    }
}
