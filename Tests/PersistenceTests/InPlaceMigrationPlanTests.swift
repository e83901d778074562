import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// What runs in place and what does not, how a failure leaves the store (on both engines),
/// and the plan's SQL on other dialects.
@Suite("In-place migration: planning and safety")
struct InPlaceMigrationPlanTests {
    typealias F = InPlaceFixtures

    @Test func hierarchyChangesThatMoveRowsAreLeftToStreaming() throws {
        // Two tables into one: their primary keys overlap.
        let separate = try F.model(
            "V1",
            """
            <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>
            <entity name="Magazine"><attribute name="title" optional="YES" attributeType="String"/></entity>
            """
        )
        let merged = try F.model(
            "V2",
            """
            <entity name="Publication" isAbstract="YES"><attribute name="title" optional="YES" attributeType="String"/></entity>
            <entity name="Book" parentEntity="Publication"/>
            <entity name="Magazine" parentEntity="Publication"/>
            """
        )
        let merging = try #require(try F.unsupported(separate, merged))
        #expect(merging.reason.contains("share the table of Publication"))

        // One table into two.
        let split = try F.model(
            "V2",
            """
            <entity name="Item" isAbstract="YES"><attribute name="name" optional="YES" attributeType="String"/></entity>
            <entity name="Gadget" parentEntity="Item"><attribute name="voltage" optional="YES" attributeType="Integer 32"/></entity>
            <entity name="Tool"><attribute name="name" optional="YES" attributeType="String"/><attribute name="weight" optional="YES" attributeType="Double"/></entity>
            """
        )
        let splitting = try #require(try F.unsupported(try F.model("V1", InPlaceMigrationTests.items), split))
        #expect(splitting.reason.contains("split"))
    }

    @Test func onlyInferredMappingsWithoutPoliciesRunInPlace() throws {
        let v1 = try F.model("V1", #"<entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"#)
        let v2 = try F.model(
            "V2",
            #"<entity name="Book"><attribute name="title" optional="YES" attributeType="String"/><attribute name="author" optional="YES" attributeType="String"/></entity>"#
        )
        let inferred = try MappingModel.inferred(from: v1, to: v2)
        #expect(throws: Never.self) { try InPlaceMigration.plan(mapping: inferred, source: v1, destination: v2, dialect: .sqlite).get() }

        var written = inferred
        written.isInferred = false
        let notInferred = InPlaceMigration.plan(mapping: written, source: v1, destination: v2, dialect: .sqlite)
        #expect(throws: InPlaceMigration.Unsupported.self) { try notInferred.get() }

        var withPolicy = inferred
        withPolicy.entityMappings[0].policyName = "BookPolicy"
        #expect(throws: InPlaceMigration.Unsupported.self) {
            try InPlaceMigration.plan(mapping: withPolicy, source: v1, destination: v2, dialect: .sqlite).get()
        }
        // A mapping between other versions does not fit these models.
        #expect(throws: InPlaceMigration.Unsupported.self) {
            try InPlaceMigration.plan(mapping: inferred, source: v2, destination: v1, dialect: .sqlite).get()
        }
    }

    /// On SQLite the file is byte for byte as it was; on PostgreSQL every table and row.
    @Test(arguments: TestEngine.allCases)
    func failingStatementLeavesTheStoreAsItWas(engine: TestEngine) async throws {
        let v1 = try F.model("V1", #"<entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"#)
        let v2 = try F.model(
            "V2",
            #"<entity name="Publication" elementID="Book"><attribute name="title" optional="YES" attributeType="String"/><attribute name="pages" attributeType="Integer 32" defaultValueString="1"/></entity>"#
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for title in ["A", "B"] { try context.insertObject(entityName: "Book").setValue(.string(title), forKey: "title") }
                try await context.save()
            }
            let before = try await StoreSnapshot(url)
            let planned = try F.plan(v1, v2, dialect: engine.dialect)
            // Everything the plan does, then a statement that fails.
            let failing = InPlaceMigration(
                steps: planned.steps + [InPlaceMigration.Step(sql: "UPDATE ZMISSING SET ZTITLE = NULL")],
                primaryKeyRows: planned.primaryKeyRows,
                dialect: engine.dialect
            )
            let error = await #expect(throws: MigrationError.self) { try await F.run(failing, on: url, destination: v2) }
            let count = failing.steps.count
            #expect(error?.message.contains("step \(count) of \(count)") == true, "every planned statement ran before the failing one")
            if case .sqlite(let path) = url.kind { try await F.waitUntilClosed(path) }

            try await expectUnchanged(url, since: before)
            let container = try await F.open(url, v1)
            #expect(titles(try await F.objects(container.newContext(), "Book", by: "title")) == ["A", "B"])
        }
    }

    @Test func renamesAreOrderedAroundNamesInUse() throws {
        // A swap needs a temporary name; a chain must run from its end.
        let renames = try InPlacePlanner.RenameOrder.order([("A", "B"), ("B", "A"), ("C", "D"), ("D", "E")], existing: ["A", "B", "C", "D"])
        var names: [String: String] = ["A": "a", "B": "b", "C": "c", "D": "d"]
        for rename in renames {
            #expect(names[rename.to] == nil, "\(rename.from) → \(rename.to) lands on a name in use")
            names[rename.to] = names.removeValue(forKey: rename.from)
        }
        #expect(names == ["B": "a", "A": "b", "D": "c", "E": "d"])
        #expect(throws: InPlaceMigration.Unsupported.self) { try InPlacePlanner.RenameOrder.order([("A", "B")], existing: ["A", "B"]) }
    }

    @Test func plansUseTheDialect() throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>
            <entity name="Page"><relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book"/></entity>
            """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Publication" elementID="Book">
                <attribute name="title" attributeType="String" defaultValueString="Untitled"/>
                <attribute name="price" attributeType="Double" defaultValueString="9.5"/>
            </entity>
            <entity name="Page"><relationship name="publication" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Publication" elementID="book"/></entity>
            """
        )
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        let migration = try InPlaceMigration.plan(mapping: mapping, source: v1, destination: v2, dialect: .postgres).get()
        #expect(migration.statements.contains("ALTER TABLE zbook RENAME TO zpublication"))
        #expect(migration.statements.contains("ALTER TABLE zbook ADD COLUMN zprice double precision"))
        #expect(migration.statements.contains("UPDATE zbook SET zprice = $1"))
        #expect(migration.statements.contains("UPDATE zbook SET ztitle = $1 WHERE ztitle IS NULL"))
        #expect(migration.statements.contains("CREATE INDEX zpage_zpublication_index ON zpage (zpublication)"))
        #expect(migration.steps.first { $0.sql.description.hasPrefix("UPDATE zbook SET zprice") }?.sql.arguments == [.double(9.5)])
    }
}
