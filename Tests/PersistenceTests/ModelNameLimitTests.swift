import Foundation
import Testing

@testable import Persistence

/// Model names against the names the store makes of them: PostgreSQL keeps 63 bytes of a
/// name, and both engines take names that differ only in case for one. A model whose store
/// names the engines cannot keep apart is refused when it is loaded or built.
@Suite("Model names within the store's limits")
struct ModelNameLimitTests {
    /// `count` characters: `prefix`, then `a`s.
    static func name(_ prefix: String, _ count: Int) -> String {
        prefix + String(repeating: "a", count: count - prefix.count)
    }

    /// The error loading `body` (see ``ModelFixtures/xml(_:identifier:)``), which must fail.
    static func loadError(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ModelError {
        try #require(ModelFixtures.error(body), "the model loaded", sourceLocation: sourceLocation)
    }

    @Test("two 65-character attribute names that differ only after byte 63 are refused at load, naming the file, line and attribute")
    func namesThatDifferPastTheLimit() throws {
        let first = Self.name("x", 63) + "12"
        let second = Self.name("x", 63) + "34"
        let error = try Self.loadError(
            """
            <entity name="Book">
                <attribute name="\(first)" optional="YES" attributeType="String"/>
                <attribute name="\(second)" optional="YES" attributeType="String"/>
            </entity>
            """
        )
        #expect(error.code == .nameTooLong)
        #expect(error.file == ModelFixtures.file)
        #expect(error.line == 4)
        #expect(error.entity == "Book")
        #expect(error.property == first)
        #expect(error.message.contains("'Z\(first.uppercased())', 66 bytes"), "the column as the store spells it, and its length")
        #expect(error.message.contains("63 bytes"))
        #expect(error.message.contains("rename '\(first)' to at most 62 bytes"))
    }

    @Test("a 5 MB attribute name is refused with a message under 1 000 bytes naming the entity")
    func hugeAttributeName() throws {
        let huge = String(repeating: "n", count: 5_000_000)
        let clock = ContinuousClock()
        var error: ModelError?
        let elapsed = clock.measure {
            error = ModelFixtures.error(
                """
                <entity name="Book">
                    <attribute name="\(huge)" optional="YES" attributeType="String"/>
                </entity>
                """
            )
        }
        let refused = try #require(error, "a 5 MB attribute name loaded")
        #expect(refused.code == .nameTooLong)
        #expect(refused.entity == "Book")
        #expect(refused.line == 4)
        #expect(refused.description.utf8.count < 1000, "\(refused.description.utf8.count) bytes")
        #expect(refused.description.contains("entity 'Book'"))
        #expect(refused.description.contains("(5000000 bytes)"))
        // A generous bound a loaded machine meets: a parse that was quadratic in the name's
        // length would take hours on 5 MB.
        #expect(elapsed < .seconds(60), "refused in \(elapsed)")
    }

    @Test(
        "names the schema derives are checked as the store spells them",
        arguments: [
            // An entity's table, Z + its name.
            (EntityCase.entity(name: name("E", 63)), "the table of entity"),
            // On PostgreSQL the primary key index is <table>_pkey: a table of at most 58 bytes.
            (EntityCase.entity(name: name("E", 58)), "the primary key index of the table of entity"),
            // A to-one relationship's column.
            (EntityCase.toOne(name: name("r", 63)), "the column of relationship"),
            // A many-to-many relationship's join table Z_1<NAME>.
            (EntityCase.manyToMany(name: name("r", 61)), "the join table of relationship"),
        ]
    )
    func derivedNames(_ entityCase: EntityCase, role: String) throws {
        let error = try #require(ModelFixtures.error(entityCase.entities), "the model was accepted")
        #expect(error.code == .nameTooLong)
        #expect(error.message.contains(role), "\(error.message)")
        #expect(error.message.contains("PostgreSQL keeps only the first 63 bytes"))
        #expect(error.entity != nil)
    }

    /// Secondary index names longer than PostgreSQL keeps are shortened by it
    /// (ZSHELF_Z<62>_INDEX, Z_1<55>_Z_2SHELVES_INDEX): accepted while they stay apart.
    @Test(
        "names at the limit are accepted, their longer index names too",
        arguments: [
            EntityCase.entity(name: name("E", 57)), .toOne(name: name("r", 62)), .manyToMany(name: name("r", 55)),
        ]
    )
    func namesAtTheLimit(_ entityCase: EntityCase) throws {
        #expect(ModelFixtures.error(entityCase.entities) == nil)
    }

    @Test("index names that become one when PostgreSQL shortens them are refused")
    func indexNamesCollidingWhenShortened() throws {
        // ZSHELF_Z<r…ra>_INDEX and ZSHELF_Z<r…rb>_INDEX share their first 63 bytes.
        let (a, b) = (Self.name("r", 61) + "a", Self.name("r", 61) + "b")
        let entities = [
            EntityDescription(
                name: "Book",
                relationships: [
                    RelationshipDescription(name: "asA", destinationEntityName: "Shelf", inverseName: a, isToMany: true),
                    RelationshipDescription(name: "asB", destinationEntityName: "Shelf", inverseName: b, isToMany: true),
                ]
            ),
            EntityDescription(
                name: "Shelf",
                relationships: [
                    RelationshipDescription(name: a, destinationEntityName: "Book", inverseName: "asA"),
                    RelationshipDescription(name: b, destinationEntityName: "Book", inverseName: "asB"),
                ]
            ),
        ]
        let error = try #require(ModelFixtures.error(entities), "the model was accepted")
        #expect(error.code == .duplicateName)
        #expect(error.message.contains("on PostgreSQL"), "\(error.message)")
    }

    @Test(
        "names that differ only in case would name one table or column, and are refused",
        arguments: [
            // Both entities' tables are ZBOOK.
            (["Book", "BOOK"], [String](), "would both be named 'ZBOOK', as the store spells names in capitals"),
            // Both many-to-many relationships' join tables are Z_1TAGS.
            (["Shelf"], ["tags", "Tags"], "would both be named 'Z_1TAGS', as the store spells names in capitals"),
            // Z + the name in capitals differs (ZXϴ, ZXΘ), but PostgreSQL's lower case does not (zxθ).
            (["Shelf"], ["xϴ", "xθ"], "would both be named 'zxθ' on PostgreSQL"),
        ]
    )
    func caseCollisions(entities: [String], properties: [String], expected: String) throws {
        var described = entities.map { EntityDescription(name: $0) }
        for name in properties {
            if name.hasPrefix("x") {
                described[0].attributes.append(AttributeDescription(name: name, type: .string))
            } else {
                described[0].relationships.append(
                    RelationshipDescription(name: name, destinationEntityName: "Tag", inverseName: "of" + name, isToMany: true)
                )
            }
        }
        if properties.contains("tags") {
            // Many-to-many: each has a join table (a to-many without an inverse is a column, made unique like any other).
            described.append(
                EntityDescription(
                    name: "Tag",
                    relationships: properties.map { name in
                        RelationshipDescription(name: "of" + name, destinationEntityName: "Shelf", inverseName: name, isToMany: true)
                    }
                )
            )
        }
        let error = try #require(ModelFixtures.error(described), "the model was accepted")
        #expect(error.code == .duplicateName)
        #expect(error.message.contains(expected), "\(error.message)")
        #expect(error.message.hasSuffix("rename one of them"))
    }

    /// Models whose one long name is `name`, in the role the case says.
    enum EntityCase: Sendable, CustomTestStringConvertible {
        case entity(name: String)
        case toOne(name: String)
        case manyToMany(name: String)

        var testDescription: String {
            switch self {
            case .entity(let name): "entity of \(name.count)"
            case .toOne(let name): "to-one of \(name.count)"
            case .manyToMany(let name): "many-to-many of \(name.count)"
            }
        }

        var entities: [EntityDescription] {
            switch self {
            case .entity(let name):
                return [EntityDescription(name: name, attributes: [AttributeDescription(name: "title", type: .string)])]
            case .toOne(let name):
                return [
                    EntityDescription(
                        name: "Book",
                        relationships: [RelationshipDescription(name: "shelves", destinationEntityName: "Shelf", inverseName: name, isToMany: true)]
                    ),
                    EntityDescription(
                        name: "Shelf",
                        relationships: [RelationshipDescription(name: name, destinationEntityName: "Book", inverseName: "shelves")]
                    ),
                ]
            case .manyToMany(let name):
                // Shelf sorts before Tag, so Shelf's relationship names the join table.
                return [
                    EntityDescription(
                        name: "Shelf",
                        relationships: [RelationshipDescription(name: name, destinationEntityName: "Tag", inverseName: "shelves", isToMany: true)]
                    ),
                    EntityDescription(
                        name: "Tag",
                        relationships: [RelationshipDescription(name: "shelves", destinationEntityName: "Shelf", inverseName: name, isToMany: true)]
                    ),
                ]
            }
        }
    }
}
