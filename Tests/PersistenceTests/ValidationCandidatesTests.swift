import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A migration's validation finds, with one SQL scan and Swift for the rows it cannot rule
/// out, exactly the problems that validating every object in Swift finds.
@Suite struct ValidationCandidatesTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            name: "Rules",
            versionIdentifier: "1",
            entities: [
                EntityDescription(
                    name: "Owner",
                    attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [
                        RelationshipDescription(
                            name: "rules",
                            destinationEntityName: "Rule",
                            inverseName: "owner",
                            isToMany: true,
                            deleteRule: .cascade
                        )
                    ]
                ),
                EntityDescription(
                    name: "Rule",
                    attributes: [
                        AttributeDescription(name: "name", type: .string, isOptional: false, maxValue: .integer(5)),
                        // A minimum length makes every row with a nick a candidate; most have none.
                        AttributeDescription(name: "nick", type: .string, minValue: .integer(2)),
                        AttributeDescription(name: "code", type: .string, maxValue: .integer(3)),
                        AttributeDescription(name: "small", type: .integer16),
                        AttributeDescription(name: "ratio", type: .float, minValue: .double(0), maxValue: .double(10)),
                        AttributeDescription(name: "blob", type: .binary, maxValue: .integer(3)),
                        AttributeDescription(name: "count", type: .integer64, isOptional: false, defaultValue: .integer(0), minValue: .integer(-5)),
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "owner",
                            destinationEntityName: "Owner",
                            inverseName: "rules",
                            isOptional: false,
                            deleteRule: .nullify
                        )
                    ]
                ),
            ]
        )
    }

    /// A valid row; each row below changes some of its values.
    static let valid: [String: DatabaseValue] = [
        "name": .text("ok"), "nick": .null, "code": .text("abc"), "small": .integer(1), "ratio": .double(1.5), "blob": .blob(Data([1])),
        "count": .integer(0), "owner": .integer(1),
    ]

    /// Rows written with SQL, past the context's own validation: valid ones, and one
    /// breaking each rule. Some text has combining characters, which SQL counts as more
    /// characters than Swift does.
    static let rows: [[String: DatabaseValue]] = [
        [:],
        ["name": .text("éé"), "code": .null, "small": .null, "ratio": .null, "blob": .null, "count": .integer(3)],
        [
            "name": .text("e\u{301}e\u{301}e\u{301}"), "code": .text("a\u{301}b\u{301}c\u{301}"), "ratio": .double(10), "blob": .blob(Data()),
            "count": .integer(-5),
        ],
        ["name": .null],  // required name missing
        ["nick": .text("éé")],
        ["nick": .text("x")],  // nick too short
        ["name": .text("toolong")],  // name too long
        ["nick": .text("a\u{301}")],  // 1 character, 2 code points: too short
        ["code": .text("abcd")],  // code too long
        ["ratio": .double(-0.5)],  // ratio below its minimum
        ["ratio": .double(11)],  // ratio above its maximum
        ["blob": .blob(Data([1, 2, 3, 4]))],  // blob too long
        ["count": .integer(-6)],  // count below its minimum
        ["count": .null],  // required count missing
        ["owner": .null],  // required owner missing
    ]

    /// On SQLite, values no typed column would hold: an integer16 out of range, text in an
    /// integer column (which Swift reads as NULL: no problem), a float beyond Float's range.
    static let sqliteOnlyRows: [[String: DatabaseValue]] = [
        ["small": .integer(40_000)],
        ["small": .text("many")],
        ["ratio": .double(1e39)],
    ]

    @Test(arguments: TestEngine.allCases)
    func sqlCandidatesFindWhatValidatingEveryObjectFinds(engine: TestEngine) async throws {
        let model = try Self.model()
        try await engine.withStoreURL { url in
            let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: testLogger)
            let schema = container.store.schema
            let d = schema.dialect
            let owner = try #require(schema.table(for: "Owner"))
            let rule = try #require(schema.table(for: "Rule"))
            let rows = Self.rows + (engine == .sqlite ? Self.sqliteOnlyRows : [])
            try await container.store.database.write { connection in
                try connection.run(
                    rawSQL:
                        "INSERT INTO \(owner.name) (\(d.name("Z_PK")), \(d.name("Z_ENT")), \(d.name("Z_OPT"))) VALUES (\(d.placeholder(1)), \(owner.entityNumber), 1)",
                    [.integer(1)]
                )
                let properties = Self.valid.keys.sorted()
                let columns = [d.name("Z_PK"), d.name("Z_ENT"), d.name("Z_OPT")] + properties.map { rule.column(for: $0)!.name }
                try connection.insertRows(
                    into: rule.name,
                    columns: columns,
                    rows: rows.enumerated().map { index, row in
                        [.integer(Int64(index + 1)), .integer(Int64(rule.entityNumber)), .integer(1)] + properties.map { row[$0] ?? Self.valid[$0]! }
                    }
                )
            }
            let context = container.newContext()
            var expected: Set<String> = []
            for entity in ["Owner", "Rule"] {
                for object in try await context.fetch(FetchRequest(entityName: entity)) {
                    for issue in ManagedObjectContext.validate(object) { expected.insert("\(issue.objectID) \(issue.key ?? "") \(issue.code)") }
                }
            }
            context.reset()
            // One problem per breaking row (text in an integer column reads as NULL: no problem).
            #expect(expected.count == (engine == .sqlite ? 13 : 11))
            var reported: [String: Int] = [:]
            do {
                try await MigrationValidation(model: model, batchSize: 4, logger: testLogger, file: nil).validate(context) { entity, rows in
                    reported[entity] = rows
                }
                Issue.record("the store breaks the model's rules")
            } catch let error as MigrationError {
                let found = try #require(error.underlying as? ValidationError)
                #expect(Set(found.issues.map { "\($0.objectID) \($0.key ?? "") \($0.code)" }) == expected)
            }
            #expect(reported == ["Owner": 1, "Rule": rows.count])
            await container.store.close()
        }
    }
}
