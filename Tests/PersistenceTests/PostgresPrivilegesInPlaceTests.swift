import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// An in-place step on PostgreSQL that adds an entity and a relationship to it (after the others, so no row is renumbered) makes the
/// entity's table in the store's own schema, as the migrating role: they get the grants
/// every table of the store had, so a service role granted the whole store uses the new
/// tables, and a role granted one table gets none of them.
///
/// PostgreSQL only: roles and grants are its own (a SQLite store is one file, its
/// permissions the file's). BookStore's own chain replaces the schema instead
/// (`PostgresPrivilegesTests` in BookStoreTests).
@Suite("PostgreSQL: tables an in-place step makes get the store's grants")
struct PostgresPrivilegesInPlaceTests {
    typealias F = InPlaceFixtures

    @Test func aServiceRoleUsesTheTablesAnInPlaceStepMade() async throws {
        let v1 = try F.model("Library", #"<entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"#)
        let v2 = try F.model(
            "Library 2",
            """
            <entity name="Book"><attribute name="title" optional="YES" attributeType="String"/>\
            <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Writer" inverseName="books" inverseEntity="Writer"/></entity>
            <entity name="Writer"><attribute name="name" optional="YES" attributeType="String"/>\
            <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/></entity>
            """
        )
        try await TestEngine.postgres.withStoreURL { url in
            guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Book").setValue(.string("Środa"), forKey: "title")
                try await context.save()
            }
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let (service, reader, password) = ("library_service_\(suffix)", "library_reader_\(suffix)", "Hasło-\(suffix)")
            let admin = try PostgresConnection(configuration: configuration)
            let roles = "\(service.quotedIdentifier), \(reader.quotedIdentifier)"
            try admin.execute(
                rawSQL: """
                    CREATE ROLE \(service.quotedIdentifier) LOGIN PASSWORD '\(password)';
                    CREATE ROLE \(reader.quotedIdentifier) LOGIN PASSWORD '\(password)';
                    GRANT USAGE ON SCHEMA \(configuration.quotedSchema) TO \(roles);
                    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(configuration.quotedSchema) TO \(service.quotedIdentifier);
                    GRANT SELECT ON zbook TO \(reader.quotedIdentifier);
                    """
            )
            defer {
                do { try admin.execute(rawSQL: "DROP OWNED BY \(roles); DROP ROLE \(roles)") } catch {
                    Issue.record("the test's roles were left on the server: \(error)")
                }
            }

            let models = try VersionedModel(name: "Library", versions: [v1, v2], currentVersionName: "Library 2")
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).migrateStore(at: url)
            guard case .inPlace = try #require(plan.steps.first).work else {
                Issue.record("the step was meant to run in place: \(plan.steps.map(\.work))")
                return
            }
            let tables = try admin.rows(rawSQL: "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [.text(configuration.schema)])
                .compactMap { $0[0].text }
            #expect(tables.contains("zwriter"), "the step made the writer's table: \(tables)")

            var asService = configuration
            (asService.user, asService.password) = (service, password)
            let container = try await PersistentContainer.open(model: v2, store: .postgres(asService), logger: testLogger)
            let context = container.newContext()
            let book = try #require(try await context.fetch(FetchRequest(entityName: "Book")).first)
            let author = try context.insertObject(entityName: "Writer")
            author.setValue(.string("Zoë"), forKey: "name")
            book.setDestination(author, forKey: "author")
            try await context.save()
            await container.store.close()

            for table in tables {
                let granted = try admin.scalar(
                    rawSQL: "SELECT has_table_privilege($1, $2, 'SELECT')::text",
                    [.text(reader), .text("\(configuration.quotedSchema).\(table)")]
                )?.text
                #expect(granted == (table == "zbook" ? "true" : "false"), "the report's SELECT on \(table): \(granted ?? "nil")")
            }
        }
    }
}
