import Foundation

/// One locked model version: its entities as they were when the version was locked.
public struct LockedVersion: Sendable, Hashable, Codable {
    /// The entities, by name.
    public var entities: [String: LockedEntity]

    /// `model` as it is now.
    public init(_ model: ManagedObjectModel) {
        let hashes = model.entityVersionHashes
        let coreDataHashes = model.coreDataEntityVersionHashes
        entities = Dictionary(
            uniqueKeysWithValues: model.entities.map { entity in
                (
                    entity.name,
                    LockedEntity(
                        entity,
                        in: model,
                        versionHash: hashes[entity.name] ?? Data(),
                        coreDataVersionHash: coreDataHashes[entity.name] ?? Data()
                    )
                )
            }
        )
    }

    /// The entity version hashes a store written by this version carries
    /// (``StoreMetadata/versionHashes``).
    public var entityVersionHashes: [String: Data] {
        entities.compactMapValues { Data(base64Encoded: $0.versionHash) }
    }

    /// What differs in `current` from this locked version, one line per difference,
    /// `Entity.property: what → what now`.
    func differences(from current: LockedVersion) -> [String] {
        var lines: [String] = []
        for name in Set(entities.keys).union(current.entities.keys).sorted() {
            switch (entities[name], current.entities[name]) {
            case (let locked?, let now?): lines += locked.differences(from: now, entity: name)
            case (_?, nil): lines.append("\(name): entity removed")
            case (nil, _?): lines.append("\(name): entity added")
            case (nil, nil): break
            }
        }
        return lines
    }
}

/// One entity of a locked version.
public struct LockedEntity: Sendable, Hashable, Codable {
    /// The entity's version hash as this framework computes it and writes it into a store's
    /// metadata (``ManagedObjectModel/entityVersionHashes``), base64.
    public var versionHash: String
    /// The entity's version hash as Apple's Core Data computes it
    /// (``ManagedObjectModel/coreDataEntityVersionHashes``), base64.
    public var coreDataVersionHash: String
    /// The parent entity's name, if any.
    public var parent: String?
    /// The entity's renaming identifier, if any: what a migration maps it from.
    public var renamingIdentifier: String?
    /// Whether the entity is abstract.
    public var isAbstract: Bool
    /// The uniqueness constraints: each a list of property names.
    public var uniquenessConstraints: [[String]]
    /// The stored attributes and relationships, inherited ones included, by name.
    public var properties: [String: LockedProperty]

    init(_ entity: EntityDescription, in model: ManagedObjectModel, versionHash: Data, coreDataVersionHash: Data) {
        self.versionHash = versionHash.base64EncodedString()
        self.coreDataVersionHash = coreDataVersionHash.base64EncodedString()
        parent = entity.parentName
        renamingIdentifier = entity.renamingIdentifier
        isAbstract = entity.isAbstract
        uniquenessConstraints = entity.uniquenessConstraints
        var properties: [String: LockedProperty] = [:]
        for attribute in model.attributes(of: entity) where !attribute.isTransient {
            properties[attribute.name] = LockedProperty(attribute)
        }
        for relationship in model.relationships(of: entity) where !relationship.isTransient {
            properties[relationship.name] = LockedProperty(relationship)
        }
        self.properties = properties
    }

    func differences(from now: LockedEntity, entity name: String) -> [String] {
        var lines: [String] = []
        if parent != now.parent { lines.append("\(name): parent \(parent ?? "none") → \(now.parent ?? "none")") }
        if renamingIdentifier != now.renamingIdentifier {
            lines.append("\(name): renaming identifier \(renamingIdentifier ?? "none") → \(now.renamingIdentifier ?? "none")")
        }
        if isAbstract != now.isAbstract {
            lines.append("\(name): \(isAbstract ? "abstract" : "concrete") → \(now.isAbstract ? "abstract" : "concrete")")
        }
        // Core Data's hash sorts them: the order in the file does not count.
        if Self.sorted(uniquenessConstraints) != Self.sorted(now.uniquenessConstraints) {
            lines.append(
                "\(name): uniqueness constraints \(Self.describe(uniquenessConstraints)) → \(Self.describe(now.uniquenessConstraints))"
            )
        }
        for property in Set(properties.keys).union(now.properties.keys).sorted() {
            switch (properties[property], now.properties[property]) {
            case (let locked?, let current?):
                lines += locked.differences(from: current).map { "\(name).\(property): \($0)" }
            case (let locked?, nil): lines.append("\(name).\(property): \(locked.kind.rawValue) removed")
            case (nil, let current?): lines.append("\(name).\(property): \(current.kind.rawValue) added")
            case (nil, nil): break
            }
        }
        // The hashes cover more than the lines above name (an entity's version hash
        // modifier; in Core Data's, a relationship's counts): a difference only they show is
        // still a change, since a store of the version carries them.
        if lines.isEmpty && (versionHash != now.versionHash || coreDataVersionHash != now.coreDataVersionHash) {
            lines.append("\(name): version hash changed")
        }
        return lines
    }

    private static func sorted(_ constraints: [[String]]) -> [String] {
        constraints.map { $0.sorted().joined(separator: ",") }.sorted()
    }

    private static func describe(_ constraints: [[String]]) -> String {
        constraints.isEmpty ? "none" : constraints.map { "(" + $0.joined(separator: ", ") + ")" }.joined(separator: " ")
    }
}

/// One stored attribute or relationship of a locked entity: what decides how a store holds it.
public struct LockedProperty: Sendable, Hashable, Codable {
    /// Attribute or relationship.
    public enum Kind: String, Sendable, Hashable, Codable {
        case attribute, relationship
    }

    /// Attribute or relationship.
    public var kind: Kind
    /// An attribute's type, as the model file names it (`String`, `Float`, …).
    public var type: String?
    /// Whether the property is optional.
    public var isOptional: Bool
    /// A relationship's destination entity.
    public var destination: String?
    /// Whether a relationship is to-many.
    public var isToMany: Bool?
    /// Whether a to-many relationship is ordered.
    public var isOrdered: Bool?
    /// A relationship's inverse, if any.
    public var inverse: String?
    /// The renaming identifier, if any: what a migration maps the property from.
    public var renamingIdentifier: String?
    /// The version hash modifier, if any.
    public var versionHashModifier: String?
    /// Whether an attribute's values may be kept outside the store's rows (`true` only;
    /// absent otherwise, so that older lock files read the same).
    public var allowsExternalStorage: Bool?

    init(_ attribute: AttributeDescription) {
        kind = .attribute
        type = attribute.type.rawValue
        isOptional = attribute.isOptional
        allowsExternalStorage = attribute.allowsExternalBinaryDataStorage ? true : nil
        renamingIdentifier = attribute.renamingIdentifier
        versionHashModifier = attribute.versionHashModifier
    }

    init(_ relationship: RelationshipDescription) {
        kind = .relationship
        isOptional = relationship.isOptional
        destination = relationship.destinationEntityName
        isToMany = relationship.isToMany
        isOrdered = relationship.isOrdered
        inverse = relationship.inverseName
        renamingIdentifier = relationship.renamingIdentifier
        versionHashModifier = relationship.versionHashModifier
    }

    /// What differs in `now`, as `what → what now`.
    func differences(from now: LockedProperty) -> [String] {
        guard kind == now.kind else { return ["\(kind.rawValue) → \(now.kind.rawValue)"] }
        var lines: [String] = []
        func compare(_ label: String, _ locked: String?, _ current: String?) {
            if locked != current { lines.append("\(label) \(locked ?? "none") → \(current ?? "none")") }
        }
        compare("type", type, now.type)
        if isOptional != now.isOptional { lines.append("\(isOptional ? "optional" : "required") → \(now.isOptional ? "optional" : "required")") }
        compare("destination", destination, now.destination)
        if isToMany != now.isToMany { lines.append("\(isToMany == true ? "to-many" : "to-one") → \(now.isToMany == true ? "to-many" : "to-one")") }
        if isOrdered != now.isOrdered {
            lines.append("\(isOrdered == true ? "ordered" : "unordered") → \(now.isOrdered == true ? "ordered" : "unordered")")
        }
        compare("inverse", inverse, now.inverse)
        compare("renaming identifier", renamingIdentifier, now.renamingIdentifier)
        compare("version hash modifier", versionHashModifier, now.versionHashModifier)
        if allowsExternalStorage != now.allowsExternalStorage {
            lines.append(
                "\(allowsExternalStorage == true ? "external storage" : "no external storage") → \(now.allowsExternalStorage == true ? "external storage" : "no external storage")"
            )
        }
        return lines
    }
}

/// A locked model version that changed since it was locked, and how.
///
/// ```swift
/// print(change)
/// // 'BookStore 4' changed since it was locked: Publication.price: type Float → Double
/// ```
public struct LockedVersionChange: Sendable, Hashable, CustomStringConvertible {
    /// The version's name.
    public var version: String
    /// Each difference, `Entity.property: what → what now`.
    public var differences: [String]

    /// `'<version>' changed since it was locked: <differences>`.
    public var description: String {
        "'\(version)' changed since it was locked: \(differences.joined(separator: "; "))"
    }
}
