import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Stores the first releases of this framework wrote keep their layout: an ordered one-to-many
/// without order keys (none were written then), a relationship that is its own inverse with
/// the join columns named `Z_1MEMBERS_1` and `Z_1MEMBERS`.
@Suite("Stores of earlier releases: their own layout")
struct EarlierReleaseLayoutTests {
    static let chapters = """
        <entity name="Book" representedClassName="Book">
            <attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="chapters" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Chapter" inverseName="book" inverseEntity="Chapter"/>
        </entity>
        <entity name="Chapter" representedClassName="Chapter">
            <attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="chapters" inverseEntity="Book"/>
        </entity>
        """

    /// Rows without an order key come first, in key order, on both engines (PostgreSQL sorts
    /// NULL last unless told), and one added now goes after them.
    @Test(arguments: TestEngine.allCases)
    func anOrderedRelationshipWithoutKeysGetsNewMembersAtItsEnd(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.chapters)
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: model, options: .createIfMissing) { container in
                let context = container.newContext()
                let book = try context.insertObject(entityName: "Book")
                for title in ["Eins", "Zwei", "Drei"] {
                    let chapter = try context.insertObject(entityName: "Chapter")
                    chapter.setValue(.string(title), forKey: "title")
                    book.addDestination(chapter, forKey: "chapters")
                }
                try await context.save()
            }
            // As an earlier release left them: no order keys.
            try await inspectWritable(url) { try $0.execute("UPDATE ZCHAPTER SET Z_FOK_BOOK = NULL") }
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let book = try #require(try await context.fetch(FetchRequest(entityName: "Book")).first)
                let chapter = try context.insertObject(entityName: "Chapter")
                chapter.setValue("Vier", forKey: "title")
                book.addDestination(chapter, forKey: "chapters")
                try await context.save()
            }
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let book = try #require(try await context.fetch(FetchRequest(entityName: "Book")).first)
                #expect(try await book.destinations(forKey: "chapters").map { $0.value(forKey: "title") } == ["Eins", "Zwei", "Drei", "Vier"])
            }
        }
    }

    static let teams = """
        <entity name="Team" representedClassName="Team">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="members" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Team" inverseName="members" inverseEntity="Team"/>
        </entity>
        """

    /// The first releases numbered the source column where the names clashed
    /// (`Z_1MEMBERS_1`), Core Data numbers the destination's (`Z_1MEMBERS1`): each store is
    /// read by its own.
    @Test(arguments: TestEngine.allCases)
    func joinColumnsNumberedByAnEarlierReleaseAreRead(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.teams)
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: model, options: .createIfMissing) { container in
                let context = container.newContext()
                let teams = try ["Core", "Rand", "周边"].map { name in
                    let team = try context.insertObject(entityName: "Team")
                    team.setValue(.string(name), forKey: "name")
                    return team
                }
                try await context.save()
                teams[0].addDestination(teams[1], forKey: "members")
                teams[0].addDestination(teams[2], forKey: "members")
                try await context.save()
            }
            #expect(
                try await storeRows(url, "SELECT Z_1MEMBERS, Z_1MEMBERS1 FROM Z_1MEMBERS ORDER BY Z_1MEMBERS1") == [
                    [.integer(1), .integer(2)], [.integer(1), .integer(3)],
                ]
            )
            // As an earlier release named them.
            try await inspectWritable(url) { connection in
                try connection.execute("ALTER TABLE Z_1MEMBERS RENAME COLUMN Z_1MEMBERS TO Z_1MEMBERS_1")
                try connection.execute("ALTER TABLE Z_1MEMBERS RENAME COLUMN Z_1MEMBERS1 TO Z_1MEMBERS")
            }
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let core = try #require(
                    try await context.fetch(FetchRequest(entityName: "Team", predicate: try Predicate(format: "name == 'Core'"))).first
                )
                #expect(try await core.destinations(forKey: "members").map { $0.value(forKey: "name") } == ["Rand", "周边"])
                let rand = try #require(
                    try await context.fetch(FetchRequest(entityName: "Team", predicate: try Predicate(format: "name == 'Rand'"))).first
                )
                let edge = try #require(
                    try await context.fetch(FetchRequest(entityName: "Team", predicate: try Predicate(format: "name == '周边'"))).first
                )
                rand.addDestination(edge, forKey: "members")
                try await context.save()
            }
            #expect(
                try await storeRows(url, "SELECT Z_1MEMBERS_1, Z_1MEMBERS FROM Z_1MEMBERS ORDER BY Z_1MEMBERS_1, Z_1MEMBERS")
                    == [[.integer(1), .integer(2)], [.integer(1), .integer(3)], [.integer(2), .integer(3)]]
            )
        }
    }
}
