import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The rows of a differential case's store, drawn from the case's generator, and what a
/// version 2 store must hold after each kind of step migrated them (see
/// ``DifferentialModel`` for the model).
///
/// Every relationship's members are drawn in an order unlike their keys (a shuffle), and
/// are added in that order: an ordered relationship must keep it, an unordered one only its
/// members.
struct DifferentialStore: Sendable {
    static let typeCycle: [AttributeType] = [
        .double, .string, .integer64, .date, .float, .boolean, .binary, .integer16,
        .decimal, .transformable, .integer32, .uuid, .string, .double, .uri,
    ]

    /// The types of `Item`'s attributes, `a0` first.
    let types: [AttributeType]
    let shapes: DifferentialShapes
    /// Each item's values, in the order of `types`.
    let items: [[AttributeValue]]
    let owners: [AttributeValue]
    let tags: [AttributeValue]
    let notes: [DifferentialNote]
    let profiles: [AttributeValue]
    /// Each owner's items (indexes into `items`), in the order they are added.
    let ownerItems: [[Int]]
    /// Each item's tags (indexes into `tags`), in the order they are added.
    let itemTags: [[Int]]
    /// Each tag's items, in the order `Tag.items` is given when it is ordered.
    let tagItems: [[Int]]
    /// Each owner's favourite items, in the order they are added; an item is the favourite
    /// of one owner at most, as a to-many without an inverse (a key on the item) keeps it.
    let favourites: [[Int]]
    /// Each item's related items, in the order they are added; never the item itself.
    let related: [[Int]]
    /// Each item's note (an index into `notes`), or none.
    let itemAbout: [Int?]
    /// Each owner's profile (an index into `profiles`), or none; some profiles have no owner.
    let ownerProfile: [Int?]

    /// The store of a case: its attribute types and rows drawn from the case's generator.
    init(width: Int, rows: Int, shapes: DifferentialShapes, using rng: inout SeededGenerator) {
        self.shapes = shapes
        let offset = Int(rng.next() % UInt64(Self.typeCycle.count))
        types = (0..<width).map { Self.typeCycle[($0 + offset) % Self.typeCycle.count] }
        let ownerCount = rows == 0 ? 0 : rows / 10 + 1
        let tagCount = rows == 0 ? 0 : min(rows, 12)
        let noteCount = rows == 0 ? 0 : rows / 25 + 3
        owners = (0..<ownerCount).map { _ in rng.oneIn(10) ? .null : .string(DifferentialValues.text(using: &rng)) }
        tags = (0..<tagCount).map { _ in .string(DifferentialValues.text(using: &rng)) }
        // The first a plain `Note`, so that a case whose items point at plain notes only has one.
        let notes = (0..<noteCount).map { index in DifferentialNote.draw(entityName: index == 0 ? "Note" : nil, using: &rng) }
        self.notes = notes
        let aboutTargets: [Int] =
            switch shapes.about {
            case .anyNote: Array(notes.indices)
            case .plainNotes: notes.indices.filter { notes[$0].entityName == "Note" }
            case .absent: []
            }
        profiles = (0..<(rows == 0 ? 0 : ownerCount / 2 + 1)).map { _ in .string(DifferentialValues.text(using: &rng)) }
        var items: [[AttributeValue]] = []
        var itemOwners: [Int?] = []
        var itemTags: [[Int]] = []
        var related: [[Int]] = []
        var itemAbout: [Int?] = []
        var favouriteOf: [Int?] = []
        for row in 0..<rows {
            let types = types
            // The second row is NULL everywhere; the others NULL once in eight.
            items.append(row == 1 ? types.map { _ in .null } : types.map { DifferentialValues.value(of: $0, using: &rng) })
            itemOwners.append(rng.oneIn(5) ? nil : Int.random(in: 0..<ownerCount, using: &rng))
            itemTags.append(Self.distinct((0..<Int(rng.next() % 4)).map { _ in Int.random(in: 0..<tagCount, using: &rng) }))
            let relatedCount = shapes.hasRelated && rows > 1 && rng.oneIn(3) ? Int(rng.next() % 3 + 1) : 0
            related.append(Self.distinct((0..<relatedCount).map { _ in Int.random(in: 0..<rows, using: &rng) }.filter { $0 != row }))
            itemAbout.append(aboutTargets.isEmpty || rng.oneIn(3) ? nil : rng.pick(aboutTargets))
            favouriteOf.append(rng.oneIn(4) ? Int.random(in: 0..<ownerCount, using: &rng) : nil)
        }
        (self.items, self.itemTags, self.related, self.itemAbout) = (items, itemTags, related, itemAbout)
        ownerItems = Self.members(of: ownerCount, from: itemOwners, using: &rng)
        favourites = Self.members(of: ownerCount, from: favouriteOf, using: &rng)
        tagItems = Self.grouped(count: tagCount, itemTags).map { $0.shuffled(using: &rng) }
        var unclaimed = Array(profiles.indices).shuffled(using: &rng)
        ownerProfile = (0..<ownerCount).map { _ in rng.oneIn(2) ? unclaimed.popLast() : nil }
    }

    /// `values` without repeats, in the order each first came.
    private static func distinct(_ values: [Int]) -> [Int] {
        var seen = Set<Int>()
        return values.filter { seen.insert($0).inserted }
    }

    /// For each of `count` groups, the indexes of `lists` that name it, ascending.
    private static func grouped(count: Int, _ lists: [[Int]]) -> [[Int]] {
        var groups = Array(repeating: [Int](), count: count)
        for (index, list) in lists.enumerated() { for group in list { groups[group].append(index) } }
        return groups
    }

    /// Each of `count` owners' members (the indexes whose `owner` names it), in a shuffled order.
    private static func members(of count: Int, from owner: [Int?], using rng: inout SeededGenerator) -> [[Int]] {
        grouped(count: count, owner.map { $0.map { [$0] } ?? [] }).map { $0.shuffled(using: &rng) }
    }

    var attributeNames: [String] { types.indices.map { "a\($0)" } }

    var model: DifferentialModel { DifferentialModel(types: types, shapes: shapes) }

    func model(version: Int) throws -> ManagedObjectModel { try model.model(version: version) }

    func versions() throws -> VersionedModel { try model.versions() }

    // MARK: Writing

    /// Inserts the store's objects into `context` and saves them: every relationship's
    /// members added one by one in their drawn order, as an app adds them. `Tag.items`, when
    /// ordered, is given its own order afterwards (its members came in the items' order).
    func fill(_ context: ManagedObjectContext) async throws {
        let owners = try self.owners.map { name in
            let owner = try context.insertObject(entityName: "Owner")
            owner.setValue(name, forKey: "name")
            return owner
        }
        let tags = try self.tags.map { label in
            let tag = try context.insertObject(entityName: "Tag")
            tag.setValue(label, forKey: "label")
            return tag
        }
        let notes = try self.notes.map { try $0.insert(into: context) }
        let profiles = try self.profiles.map { bio in
            let profile = try context.insertObject(entityName: "Profile")
            profile.setValue(bio, forKey: "bio")
            return profile
        }
        let names = attributeNames
        let items = try self.items.enumerated().map { index, values in
            let item = try context.insertObject(entityName: "Item")
            for (name, value) in zip(names, values) { item.setValue(value, forKey: name) }
            for tag in itemTags[index] { item.addDestination(tags[tag], forKey: "tags") }
            if let note = itemAbout[index] { item.setDestination(notes[note], forKey: "about") }
            return item
        }
        for (index, item) in items.enumerated() {
            for other in related[index] { item.addDestination(items[other], forKey: "related") }
        }
        for (index, owner) in owners.enumerated() {
            for item in ownerItems[index] { owner.addDestination(items[item], forKey: "items") }
            for item in favourites[index] { owner.addDestination(items[item], forKey: "favourites") }
            if let profile = ownerProfile[index] { owner.setDestination(profiles[profile], forKey: "profile") }
        }
        if shapes.tagItemsOrdered {
            for (index, tag) in tags.enumerated() { try await tag.setDestinations(tagItems[index].map { items[$0] }, forKey: "items") }
        }
        try await context.save()
    }

    // MARK: Expected contents

    /// What a version 2 store holds after `kind` migrated this one, computed from the rows
    /// alone: the same values (`a0` as `renamed`) and the note the kind writes, the same
    /// objects around them, and every relationship's members, in their order where it is
    /// ordered and ascending where it is not.
    func expected(after kind: DifferentialStepKind) -> DifferentialContents {
        func inOrder(_ lists: [[Int]], if ordered: Bool) -> [[Int]] { ordered ? lists : lists.map { $0.sorted() } }
        var itemOwners = [Int?](repeating: nil, count: items.count)
        for (owner, members) in ownerItems.enumerated() { for item in members { itemOwners[item] = owner } }
        var profileOwner = [Int?](repeating: nil, count: profiles.count)
        for (owner, profile) in ownerProfile.enumerated() { if let profile { profileOwner[profile] = owner } }
        return DifferentialContents(
            items: items.map { $0 + [kind.note(forSourceValues: $0)] },
            owners: owners,
            tags: tags,
            notes: notes,
            profiles: profiles,
            itemOwners: itemOwners,
            ownerItems: inOrder(ownerItems, if: shapes.ownerItemsOrdered),
            itemTags: inOrder(itemTags, if: shapes.itemTagsOrdered),
            tagItems: inOrder(tagItems, if: shapes.tagItemsOrdered),
            favourites: inOrder(favourites, if: shapes.favouritesOrdered),
            related: inOrder(related, if: shapes.relatedOrdered),
            itemAbout: itemAbout,
            ownerProfile: ownerProfile,
            profileOwner: profileOwner
        )
    }
}
