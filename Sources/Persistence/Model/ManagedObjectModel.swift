import Foundation

/// A version of a data model: its entities and their properties, as in Core Data's
/// `NSManagedObjectModel`.
///
/// Load one version from Xcode's `.xcdatamodel` folder, or all versions from an
/// `.xcdatamodeld` with ``VersionedModel``:
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Migrations/BookStore.xcdatamodeld/BookStore.xcdatamodel"))
/// let book = model.entity(named: "Book")
/// ```
///
/// The initialiser validates the model: names are unique, parents, destinations and
/// inverses exist and agree. A model value is therefore always consistent.
public struct ManagedObjectModel: Sendable, Hashable {
    /// The version name, e.g. `BookStore 2` (the `.xcdatamodel` folder name without extension).
    public let name: String
    /// `userDefinedModelVersionIdentifier`, e.g. `"2.0"`; empty when not set.
    public let versionIdentifier: String
    /// The entities, sorted by name. (Core Data numbers them in `Z_ENT` by inheritance tree:
    /// see ``EntityNumbering``.)
    public let entities: [EntityDescription]
    private let indexByName: [String: Int]
    /// What Core Data loads but its author probably did not mean (a relationship whose
    /// inverse does not name it back, …), in the order of the file. Not part of the model's
    /// identity: two models that differ only in where their files are compare equal.
    public internal(set) var warnings: [ModelWarning] = []

    /// Creates and validates a model.
    ///
    /// - Throws: ``ModelError`` naming the entity and property at fault.
    public init(name: String, versionIdentifier: String = "", entities: [EntityDescription]) throws(ModelError) {
        let sorted = entities.sorted { $0.name < $1.name }
        var index: [String: Int] = [:]
        for (i, entity) in sorted.enumerated() where index[entity.name] == nil {
            index[entity.name] = i
        }
        self.name = name
        self.versionIdentifier = versionIdentifier
        self.entities = sorted
        self.indexByName = index
        self.warnings = try validate(declaredOrder: entities)
    }

    // The warnings say where the file was: leave them out of what makes two models the same.
    /// Whether both are the same version with the same entities; where their files are (the warnings) does not count.
    public static func == (lhs: ManagedObjectModel, rhs: ManagedObjectModel) -> Bool {
        lhs.name == rhs.name && lhs.versionIdentifier == rhs.versionIdentifier && lhs.entities == rhs.entities
    }

    /// Hashes the name, version identifier and entities, in step with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(versionIdentifier)
        hasher.combine(entities)
    }

    /// The entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        indexByName[name].map { entities[$0] }
    }

    /// The entity's ancestors, nearest first.
    public func ancestors(of entity: EntityDescription) -> [EntityDescription] {
        var result: [EntityDescription] = []
        var parentName = entity.parentName
        while let name = parentName, let parent = self.entity(named: name), !result.contains(where: { $0.name == name }) {
            result.append(parent)
            parentName = parent.parentName
        }
        return result
    }

    /// The root of the entity's inheritance tree (itself when it has no parent).
    /// Every entity of a tree is stored in its root's table.
    public func rootEntity(of entity: EntityDescription) -> EntityDescription {
        ancestors(of: entity).last ?? entity
    }

    /// The direct sub-entities of an entity.
    public func subentities(of entity: EntityDescription) -> [EntityDescription] {
        entities.filter { $0.parentName == entity.name }
    }

    /// The entity and all its descendants.
    public func entityAndDescendants(of entity: EntityDescription) -> [EntityDescription] {
        var result = [entity]
        var i = 0
        while i < result.count {
            result.append(contentsOf: subentities(of: result[i]))
            i += 1
        }
        return result
    }

    /// All attributes of an entity, inherited ones first.
    public func attributes(of entity: EntityDescription) -> [AttributeDescription] {
        (ancestors(of: entity).reversed() + [entity]).flatMap(\.attributes)
    }

    /// All relationships of an entity, inherited ones first.
    public func relationships(of entity: EntityDescription) -> [RelationshipDescription] {
        (ancestors(of: entity).reversed() + [entity]).flatMap(\.relationships)
    }

    /// The attribute with this name on the entity or an ancestor.
    public func attribute(named name: String, of entity: EntityDescription) -> AttributeDescription? {
        furthest(from: entity) { $0.attributes.first { $0.name == name } }
    }

    /// The relationship with this name on the entity or an ancestor.
    public func relationship(named name: String, of entity: EntityDescription) -> RelationshipDescription? {
        furthest(from: entity) { $0.relationships.first { $0.name == name } }
    }

    /// What `find` finds on the entity or an ancestor, the one nearest the root when several
    /// have it (as the first of ``attributes(of:)``, inherited ones first). Walks up without
    /// building the lists: fetches compile key paths with it on every request.
    private func furthest<T>(from entity: EntityDescription, _ find: (EntityDescription) -> T?) -> T? {
        var found = find(entity)
        var parentName = entity.parentName
        // Bounded, as ``ancestors(of:)`` is, should a damaged model's parents form a loop.
        var steps = 0
        while let name = parentName, let parent = self.entity(named: name), steps < entities.count {
            if let match = find(parent) { found = match }
            parentName = parent.parentName
            steps += 1
        }
        return found
    }

    /// The inverse of a relationship: the relationship of the destination entity (or an
    /// ancestor of it) that `relationship`'s own `inverseName` names; `nil` when it names none.
    ///
    /// As in Core Data, each relationship has its own inverse, which need not name it back:
    /// where `Book.pages` names `Page.book` but `Page.book` names no inverse (or another
    /// relationship), `inverse(of: pages)` is `Page.book` and `inverse(of: book)` is `nil`
    /// (or that other relationship). The model loads with a ``ModelWarning`` then; a to-many
    /// is stored as its inverse's foreign key whether or not the inverse names it back, and
    /// changing a relationship updates the inverse it names, not the other way round.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName,
            let destination = entity(named: relationship.destinationEntityName)
        else { return nil }
        return self.relationship(named: inverseName, of: destination)
    }

    /// Whether `entity` is `ancestor` or one of its descendants.
    public func entity(_ entity: EntityDescription, isKindOf ancestor: EntityDescription) -> Bool {
        entity.name == ancestor.name || ancestors(of: entity).contains { $0.name == ancestor.name }
    }
}
