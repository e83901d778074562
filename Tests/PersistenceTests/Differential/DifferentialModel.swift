@testable import Persistence

/// The model of a differential case, version 1 or 2: `Item`, with the case's attributes,
/// and around it every shape of relationship a Core Data model has, each stored its own way:
///
/// - `Item.owner` ↔ `Owner.items`: one-to-many (a foreign key on `Item`), `Owner.items`
///   ordered in some cases (an order column beside it);
/// - `Item.tags` ↔ `Tag.items`: many-to-many (a join table), ordered on neither side, on
///   one or on both;
/// - `Owner.favourites` → `Item`: a to-many without an inverse (a hidden key on `Item`),
///   ordered in some cases;
/// - `Item.related` ↔ `Item.relatedBy`: a reflexive many-to-many (a join table whose two
///   columns point into the same table), in some cases, `Item.related` ordered in some;
/// - `Item.about` → `Note`, whose sub-entities `Comment` and `Reminder` share its table:
///   a to-one into an entity hierarchy, the rows telling the entities apart (see
///   ``DifferentialShapes/About`` for the cases without it);
/// - `Owner.profile` ↔ `Profile.owner`: one-to-one (a foreign key on both sides), deleting
///   an owner cascading to its profile.
///
/// Version 2 renames `a0` to `renamed` (renaming identifier `a0`) and adds an optional
/// `note`, and keeps every relationship as it was: every kind of step can run it, and each
/// kind's `note` says which ran (see ``DifferentialStepKind``).
struct DifferentialModel: Sendable {
    let types: [AttributeType]
    let shapes: DifferentialShapes

    func model(version: Int) throws -> ManagedObjectModel {
        var attributes = types.enumerated().map { index, type in
            AttributeDescription(name: "a\(index)", type: type)
        }
        if version == 2 {
            attributes[0] = AttributeDescription(name: "renamed", type: types[0], renamingIdentifier: "a0")
            attributes.append(AttributeDescription(name: "note", type: .string))
        }
        return try ManagedObjectModel(
            name: Self.name(version),
            versionIdentifier: "\(version)",
            entities: [
                EntityDescription(name: "Item", attributes: attributes, relationships: itemRelationships),
                EntityDescription(
                    name: "Owner",
                    attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "items",
                            destinationEntityName: "Item",
                            inverseName: "owner",
                            isToMany: true,
                            isOrdered: shapes.ownerItemsOrdered
                        ),
                        RelationshipDescription(
                            name: "favourites",
                            destinationEntityName: "Item",
                            isToMany: true,
                            isOrdered: shapes.favouritesOrdered
                        ),
                        RelationshipDescription(name: "profile", destinationEntityName: "Profile", inverseName: "owner", deleteRule: .cascade),
                    ]
                ),
                EntityDescription(
                    name: "Tag",
                    attributes: [AttributeDescription(name: "label", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "items",
                            destinationEntityName: "Item",
                            inverseName: "tags",
                            isToMany: true,
                            isOrdered: shapes.tagItemsOrdered
                        )
                    ]
                ),
                EntityDescription(
                    name: "Note",
                    attributes: [AttributeDescription(name: "text", type: .string)],
                    relationships: shapes.about == .absent
                        ? []
                        : [
                            RelationshipDescription(name: "subjects", destinationEntityName: "Item", inverseName: "about", isToMany: true)
                        ]
                ),
                EntityDescription(name: "Comment", parentName: "Note", attributes: [AttributeDescription(name: "author", type: .string)]),
                EntityDescription(name: "Reminder", parentName: "Note", attributes: [AttributeDescription(name: "dueDay", type: .integer64)]),
                EntityDescription(
                    name: "Profile",
                    attributes: [AttributeDescription(name: "bio", type: .string)],
                    relationships: [
                        RelationshipDescription(name: "owner", destinationEntityName: "Owner", inverseName: "profile")
                    ]
                ),
            ]
        )
    }

    /// `Item`'s relationships: `related` and `about` where the case has them.
    private var itemRelationships: [RelationshipDescription] {
        var relationships = [
            RelationshipDescription(name: "owner", destinationEntityName: "Owner", inverseName: "items"),
            RelationshipDescription(
                name: "tags",
                destinationEntityName: "Tag",
                inverseName: "items",
                isToMany: true,
                isOrdered: shapes.itemTagsOrdered
            ),
        ]
        if shapes.hasRelated {
            relationships.append(
                RelationshipDescription(
                    name: "related",
                    destinationEntityName: "Item",
                    inverseName: "relatedBy",
                    isToMany: true,
                    isOrdered: shapes.relatedOrdered
                )
            )
            relationships.append(RelationshipDescription(name: "relatedBy", destinationEntityName: "Item", inverseName: "related", isToMany: true))
        }
        if shapes.about != .absent {
            relationships.append(RelationshipDescription(name: "about", destinationEntityName: "Note", inverseName: "subjects"))
        }
        return relationships
    }

    static func name(_ version: Int) -> String { version == 1 ? "Differential" : "Differential \(version)" }

    func versions() throws -> VersionedModel {
        try VersionedModel(name: "Differential", versions: [model(version: 1), model(version: 2)], currentVersionName: Self.name(2))
    }
}
