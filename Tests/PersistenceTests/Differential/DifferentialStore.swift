import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

/// The model of a differential case, version 1 and 2, and the rows its store holds.
///
/// `Item` has `width` attributes of every type (`a0`, `a1`, …), a to-one `owner` (whose
/// inverse, `Owner.items`, is to-many) and a many-to-many `tags` with `Tag.items`. Version 2
/// renames `a0` to `renamed` (renaming identifier `a0`) and adds an optional `note`: every
/// kind of step can run it, and each kind's `note` says which ran (see ``DifferentialStepKind``).
struct DifferentialStore: Sendable {
    static let typeCycle: [AttributeType] = [
        .double, .string, .integer64, .date, .float, .boolean, .binary, .integer16,
        .decimal, .transformable, .integer32, .uuid, .string, .double, .uri,
    ]

    /// The types of `Item`'s attributes, `a0` first.
    let types: [AttributeType]
    /// Each item's values, in the order of `types`.
    let items: [[AttributeValue]]
    /// Each item's owner, an index into `owners`, or none.
    let itemOwners: [Int?]
    /// Each item's tags, indexes into `tags`, ascending.
    let itemTags: [[Int]]
    let owners: [AttributeValue]
    let tags: [AttributeValue]

    /// The store of a case: its attribute types and rows drawn from the case's generator.
    init(width: Int, rows: Int, using rng: inout SeededGenerator) {
        let offset = Int(rng.next() % UInt64(Self.typeCycle.count))
        types = (0..<width).map { Self.typeCycle[($0 + offset) % Self.typeCycle.count] }
        let ownerCount = rows == 0 ? 0 : rows / 10 + 1
        let tagCount = rows == 0 ? 0 : min(rows, 12)
        owners = (0..<ownerCount).map { _ in rng.oneIn(10) ? .null : .string(DifferentialValues.text(using: &rng)) }
        tags = (0..<tagCount).map { _ in .string(DifferentialValues.text(using: &rng)) }
        var items: [[AttributeValue]] = []
        var itemOwners: [Int?] = []
        var itemTags: [[Int]] = []
        for row in 0..<rows {
            let types = types
            // The second row is NULL everywhere; the others NULL once in eight.
            items.append(row == 1 ? types.map { _ in .null } : types.map { DifferentialValues.value(of: $0, using: &rng) })
            itemOwners.append(rng.oneIn(5) ? nil : Int.random(in: 0..<ownerCount, using: &rng))
            let tagged = (0..<Int(rng.next() % 4)).map { _ in Int.random(in: 0..<tagCount, using: &rng) }
            itemTags.append(Set(tagged).sorted())
        }
        (self.items, self.itemOwners, self.itemTags) = (items, itemOwners, itemTags)
    }

    var attributeNames: [String] { types.indices.map { "a\($0)" } }

    // MARK: Models

    func model(version: Int) throws -> ManagedObjectModel {
        var attributes = types.enumerated().map { index, type in
            AttributeDescription(name: "a\(index)", type: type)
        }
        if version == 2 {
            attributes[0] = AttributeDescription(name: "renamed", type: types[0], renamingIdentifier: "a0")
            attributes.append(AttributeDescription(name: "note", type: .string))
        }
        return try ManagedObjectModel(name: Self.modelName(version), versionIdentifier: "\(version)", entities: [
            EntityDescription(name: "Item", attributes: attributes, relationships: [
                RelationshipDescription(name: "owner", destinationEntityName: "Owner", inverseName: "items", deleteRule: .nullify),
                RelationshipDescription(name: "tags", destinationEntityName: "Tag", inverseName: "items", isToMany: true, deleteRule: .nullify),
            ]),
            EntityDescription(name: "Owner", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "items", destinationEntityName: "Item", inverseName: "owner", isToMany: true, deleteRule: .nullify),
            ]),
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)], relationships: [
                RelationshipDescription(name: "items", destinationEntityName: "Item", inverseName: "tags", isToMany: true, deleteRule: .nullify),
            ]),
        ])
    }

    static func modelName(_ version: Int) -> String { version == 1 ? "Differential" : "Differential \(version)" }

    func versions() throws -> VersionedModel {
        try VersionedModel(name: "Differential", versions: [model(version: 1), model(version: 2)], currentVersionName: Self.modelName(2))
    }

    // MARK: Writing and reading

    /// Inserts the store's objects into `context` and saves them.
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
        let names = attributeNames
        for (index, values) in items.enumerated() {
            let item = try context.insertObject(entityName: "Item")
            for (name, value) in zip(names, values) { item.setValue(value, forKey: name) }
            if let owner = itemOwners[index] { item.setDestination(owners[owner], forKey: "owner") }
            for tag in itemTags[index] { item.addDestination(tags[tag], forKey: "tags") }
        }
        try await context.save()
    }

    /// What a version 2 store holds after `kind` migrated this one, computed from the rows
    /// alone: the same values (`a0` as `renamed`), relationships and owners and tags, and
    /// the note the kind writes.
    func expected(after kind: DifferentialStepKind) -> DifferentialContents {
        DifferentialContents(
            items: items.map { $0 + [kind.note(forSourceValues: $0)] },
            itemOwners: itemOwners, itemTags: itemTags, owners: owners, tags: tags)
    }
}

/// What a store at version 2 holds, objects in primary-key order, relationships as
/// positions in that order: two stores with the same contents hold the same objects, values
/// and relationships whatever keys each engine gave them.
struct DifferentialContents: Equatable, Sendable {
    var items: [[AttributeValue]]
    var itemOwners: [Int?]
    var itemTags: [[Int]]
    var owners: [AttributeValue]
    var tags: [AttributeValue]

    /// `Item`'s attributes at version 2, in the order its values are kept: `a0` renamed,
    /// the others, then the added `note`.
    static func version2Names(_ attributeNames: [String]) -> [String] {
        ["renamed"] + attributeNames.dropFirst() + ["note"]
    }

    /// Reads a version 2 store through `context`.
    init(reading context: ManagedObjectContext, attributeNames: [String]) async throws {
        func inKeyOrder(_ entity: String) async throws -> [ManagedObject] {
            try await context.fetch(FetchRequest(entityName: entity)).sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        }
        let items = try await inKeyOrder("Item")
        let owners = try await inKeyOrder("Owner")
        let tags = try await inKeyOrder("Tag")
        let ownerPosition = Dictionary(uniqueKeysWithValues: owners.enumerated().map { ($1.objectID, $0) })
        let itemPosition = Dictionary(uniqueKeysWithValues: items.enumerated().map { ($1.objectID, $0) })
        let names = Self.version2Names(attributeNames)
        self.items = items.map { item in names.map { item.value(forKey: $0) } }
        itemOwners = items.map { $0.destinationID(forKey: "owner").map { ownerPosition[$0] ?? -1 } }
        var itemTags = Array(repeating: [Int](), count: items.count)
        for (position, tag) in tags.enumerated() {
            for item in try await tag.destinations(forKey: "items") {
                guard let index = itemPosition[item.objectID] else { continue }
                itemTags[index].append(position)
            }
        }
        self.itemTags = itemTags.map { $0.sorted() }
        self.owners = owners.map { $0.value(forKey: "name") }
        self.tags = tags.map { $0.value(forKey: "label") }
    }

    init(items: [[AttributeValue]], itemOwners: [Int?], itemTags: [[Int]], owners: [AttributeValue], tags: [AttributeValue]) {
        (self.items, self.itemOwners, self.itemTags, self.owners, self.tags) = (items, itemOwners, itemTags, owners, tags)
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
        if items.count != expected.items.count { note("\(items.count) items, expected \(expected.items.count)") }
        if owners != expected.owners { note("owners \(Self.first(owners, expected.owners))") }
        if tags != expected.tags { note("tags \(Self.first(tags, expected.tags))") }
        let names = Self.version2Names(attributeNames)
        for (row, (actual, wanted)) in zip(items, expected.items).enumerated() where actual != wanted {
            for (name, (value, expectedValue)) in zip(names, zip(actual, wanted)) where value != expectedValue {
                note("item \(row + 1) \(name): \(Self.short(value)), expected \(Self.short(expectedValue))")
            }
        }
        for (row, (owner, wanted)) in zip(itemOwners, expected.itemOwners).enumerated() where owner != wanted {
            note("item \(row + 1) owner: \(owner.map(String.init) ?? "none"), expected \(wanted.map(String.init) ?? "none")")
        }
        for (row, (tags, wanted)) in zip(itemTags, expected.itemTags).enumerated() where tags != wanted {
            note("item \(row + 1) tags: \(tags), expected \(wanted)")
        }
        return found
    }

    private static func first(_ actual: [AttributeValue], _ expected: [AttributeValue]) -> String {
        guard actual.count == expected.count else { return "\(actual.count), expected \(expected.count)" }
        guard let index = actual.indices.first(where: { actual[$0] != expected[$0] }) else { return "equal" }
        return "\(index + 1): \(short(actual[index])), expected \(short(expected[index]))"
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
