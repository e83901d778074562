import Foundation
import PersistenceTesting

@testable import Persistence

/// What a store at version 2 holds, objects of each entity in primary-key order and
/// relationships as positions in those orders: two stores with the same contents hold the
/// same objects, values and relationships whatever keys each engine gave them. An ordered
/// relationship's members are in its order, an unordered one's ascending: orders are held
/// as orders, sets as sets.
struct DifferentialContents: Equatable, Sendable {
    var items: [[AttributeValue]]
    var owners: [AttributeValue]
    var tags: [AttributeValue]
    var notes: [DifferentialNote]
    var profiles: [AttributeValue]
    var itemOwners: [Int?]
    var ownerItems: [[Int]]
    var itemTags: [[Int]]
    var tagItems: [[Int]]
    var favourites: [[Int]]
    var related: [[Int]]
    var itemAbout: [Int?]
    var ownerProfile: [Int?]
    var profileOwner: [Int?]

    /// `Item`'s attributes at version 2, in the order its values are kept: `a0` renamed,
    /// the others, then the added `note`.
    static func version2Names(_ attributeNames: [String]) -> [String] {
        ["renamed"] + attributeNames.dropFirst() + ["note"]
    }

    init(
        items: [[AttributeValue]],
        owners: [AttributeValue],
        tags: [AttributeValue],
        notes: [DifferentialNote],
        profiles: [AttributeValue],
        itemOwners: [Int?],
        ownerItems: [[Int]],
        itemTags: [[Int]],
        tagItems: [[Int]],
        favourites: [[Int]],
        related: [[Int]],
        itemAbout: [Int?],
        ownerProfile: [Int?],
        profileOwner: [Int?]
    ) {
        (self.items, self.owners, self.tags, self.notes, self.profiles) = (items, owners, tags, notes, profiles)
        (self.itemOwners, self.ownerItems, self.itemTags, self.tagItems) = (itemOwners, ownerItems, itemTags, tagItems)
        (self.favourites, self.related, self.itemAbout, self.ownerProfile, self.profileOwner) = (
            favourites, related, itemAbout, ownerProfile, profileOwner
        )
    }

    /// Reads a version 2 store through `context`. A to-many is read from the side whose
    /// order is asked for, or from the side with fewer objects when neither is ordered (one
    /// query per owner of it): `Item.tags` item by item only when it is ordered, as
    /// `Owner.items` owner by owner; `Item.related`, where the case has it, item by item, its
    /// inverse being the same rows seen from the other column.
    init(reading context: ManagedObjectContext, attributeNames: [String], shapes: DifferentialShapes) async throws {
        func inKeyOrder(_ entity: String) async throws -> [ManagedObject] {
            try await context.fetch(FetchRequest(entityName: entity)).sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        }
        /// Positions in `objects`, -1 for an object not among them (which no expected contents hold).
        func positions(_ objects: [ManagedObject]) -> (ObjectID?) -> Int? {
            let position = Dictionary(uniqueKeysWithValues: objects.enumerated().map { ($1.objectID, $0) })
            return { id in id.map { position[$0] ?? -1 } }
        }
        func members(of objects: [ManagedObject], _ key: String, in destinations: (ObjectID?) -> Int?, ordered: Bool) async throws -> [[Int]] {
            var lists: [[Int]] = []
            for object in objects {
                let list = try await object.destinations(forKey: key).map { destinations($0.objectID) ?? -1 }
                lists.append(ordered ? list : list.sorted())
            }
            return lists
        }
        let items = try await inKeyOrder("Item")
        let owners = try await inKeyOrder("Owner")
        let tags = try await inKeyOrder("Tag")
        let notes = try await inKeyOrder("Note")
        let profiles = try await inKeyOrder("Profile")
        let (item, owner, tag, note, profile) = (positions(items), positions(owners), positions(tags), positions(notes), positions(profiles))
        let names = Self.version2Names(attributeNames)
        self.items = items.map { item in names.map { item.value(forKey: $0) } }
        self.owners = owners.map { $0.value(forKey: "name") }
        self.tags = tags.map { $0.value(forKey: "label") }
        self.notes = notes.map(DifferentialNote.init(reading:))
        self.profiles = profiles.map { $0.value(forKey: "bio") }
        itemOwners = items.map { owner($0.destinationID(forKey: "owner")) }
        itemAbout = shapes.about == .absent ? items.map { _ in nil } : items.map { note($0.destinationID(forKey: "about")) }
        ownerProfile = owners.map { profile($0.destinationID(forKey: "profile")) }
        profileOwner = profiles.map { owner($0.destinationID(forKey: "owner")) }
        tagItems = try await members(of: tags, "items", in: item, ordered: shapes.tagItemsOrdered)
        itemTags =
            shapes.itemTagsOrdered
            ? try await members(of: items, "tags", in: tag, ordered: true)
            : Self.inverted(tagItems, count: items.count)
        ownerItems =
            shapes.ownerItemsOrdered
            ? try await members(of: owners, "items", in: item, ordered: true)
            : Self.inverted(itemOwners.map { $0.map { [$0] } ?? [] }, count: owners.count)
        favourites = try await members(of: owners, "favourites", in: item, ordered: shapes.favouritesOrdered)
        related = shapes.hasRelated ? try await members(of: items, "related", in: item, ordered: shapes.relatedOrdered) : items.map { _ in [] }
    }

    /// The other side of `lists`, a relationship as positions: for each of `count` objects,
    /// the positions whose list names it, ascending (a position of -1, an object not read,
    /// is left to the side that names it).
    private static func inverted(_ lists: [[Int]], count: Int) -> [[Int]] {
        var inverse = Array(repeating: [Int](), count: count)
        for (position, list) in lists.enumerated() {
            for member in list where inverse.indices.contains(member) { inverse[member].append(position) }
        }
        return inverse
    }

    /// The same contents as `backend` keeps them: PostgreSQL's `timestamp with time zone`
    /// holds a date to the nearest microsecond, the other engines hold its every bit.
    func kept(by backend: TestBackend) -> DifferentialContents {
        guard backend == .postgres else { return self }
        var kept = self
        kept.items = items.map { values in
            values.map { value in
                guard case .date(let date) = value else { return value }
                let microseconds = (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
                return .date(Date(timeIntervalSinceReferenceDate: microseconds / 1_000_000))
            }
        }
        return kept
    }

    /// The first few differences from `expected`, each saying where: an empty list when the
    /// two are equal.
    func differences(from expected: DifferentialContents, attributeNames: [String], limit: Int = 5) -> [String] {
        var found: [String] = []
        func note(_ text: String) { if found.count < limit { found.append(text) } }
        func compare<T: Equatable>(_ what: String, _ actual: [T], _ wanted: [T], _ describe: (T) -> String) {
            if actual.count != wanted.count { note("\(actual.count) \(what), expected \(wanted.count)") }
            for (index, (value, expectedValue)) in zip(actual, wanted).enumerated() where value != expectedValue {
                note("\(what) \(index + 1): \(describe(value)), expected \(describe(expectedValue))")
            }
        }
        func position(_ value: Int?) -> String { value.map { "\($0 + 1)" } ?? "none" }
        func positions(_ list: [Int]) -> String { "[\(list.map { "\($0 + 1)" }.joined(separator: ", "))]" }
        if items.count != expected.items.count { note("\(items.count) items, expected \(expected.items.count)") }
        let names = Self.version2Names(attributeNames)
        for (row, (actual, wanted)) in zip(items, expected.items).enumerated() where actual != wanted {
            for (name, (value, expectedValue)) in zip(names, zip(actual, wanted)) where value != expectedValue {
                note("item \(row + 1) \(name): \(Self.short(value)), expected \(Self.short(expectedValue))")
            }
        }
        compare("owner names", owners, expected.owners, Self.short)
        compare("tag labels", tags, expected.tags, Self.short)
        compare("notes", notes, expected.notes) { "\($0.entityName) \(Self.short($0.text)) \(Self.short($0.extra))" }
        compare("profile bios", profiles, expected.profiles, Self.short)
        compare("Item.owner of item", itemOwners, expected.itemOwners, position)
        compare("Owner.items of owner", ownerItems, expected.ownerItems, positions)
        compare("Item.tags of item", itemTags, expected.itemTags, positions)
        compare("Tag.items of tag", tagItems, expected.tagItems, positions)
        compare("Owner.favourites of owner", favourites, expected.favourites, positions)
        compare("Item.related of item", related, expected.related, positions)
        compare("Item.about of item", itemAbout, expected.itemAbout, position)
        compare("Owner.profile of owner", ownerProfile, expected.ownerProfile, position)
        compare("Profile.owner of profile", profileOwner, expected.profileOwner, position)
        return found
    }

    /// A value as a message shows it: long text and data cut.
    static func short(_ value: AttributeValue) -> String {
        switch value {
        case .string(let text) where text.count > 60: "\"\(text.prefix(60))…\" (\(text.count) characters)"
        case .binary(let data): "\(data.count) bytes \(data.prefix(8).map { String(format: "%02x", $0) }.joined())…"
        case .double(let number): "\(number) (bits \(String(number.bitPattern, radix: 16)))"
        case .date(let date): "date \(date.timeIntervalSinceReferenceDate)"
        default: "\(value)"
        }
    }
}
