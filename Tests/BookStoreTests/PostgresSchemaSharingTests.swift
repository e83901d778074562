import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A PostgreSQL store keeps its schema to itself, as a SQLite store its file: a migration
/// that writes a new store replaces the whole schema, and `reset` drops the store's tables.
/// Other tables in the schema — an application's own, in `public` beside the store — are
/// never dropped: creating or copying a store beside them, migrating through a shadow schema
/// and `reset` are refused, saying which they are and how to move them, and change nothing.
///
/// PostgreSQL only: schemas are its own; a SQLite file that is some other database is
/// refused as "not a store" (`MetadataTests.sqliteDatabaseWithoutMetadataIsNotAStore`).
@Suite("PostgreSQL: a store's schema is its own")
struct PostgresSchemaSharingTests {
    /// Runs `sql` on the database of `url` (in its schema), outside any store.
    func execute(_ url: StoreURL, _ sql: String) throws {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        let connection = try PostgresConnection(configuration: configuration)
        try connection.execute(rawSQL: sql)
    }

    func tables(_ url: StoreURL) throws -> [String] {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        let connection = try PostgresConnection(configuration: configuration)
        return try connection.rows(rawSQL: "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [.text(configuration.schema)])
            .compactMap { $0[0].text }
    }

    /// A schema whose name is as long as PostgreSQL takes (63 bytes, non-ASCII): the shadow
    /// schemas of a migration through it still have names of their own within that limit
    /// (PostgreSQL would cut longer ones to the same name), and none is left after.
    @Test func aStoreInASchemaOfTheLongestNameMigratesThroughItsShadowSchemas() async throws {
        try await TestPostgres.withDatabase { database in
            guard case .postgres(var configuration) = database.kind else { preconditionFailure("a PostgreSQL store URL") }
            configuration.schema = String(repeating: "ß", count: 31) + "x"
            #expect(configuration.schema.utf8.count == 63)
            let url = StoreURL.postgres(configuration)
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "2", "--count", "40", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let migrate = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(migrate.status == 0, "\(migrate.stderr.suffix(2000))")
            let status = try await BookStoreProcess.running(["status", "--store", url.description])
            #expect(status.stdout.contains("Store model version:   BookStore 5\n"), "\(status.stdout)")
            #expect(try await storeValues(url, "SELECT count(*) FROM zpublication") == ["44"])
            let connection = try PostgresConnection(configuration: configuration)
            let schemas = try connection.rows(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' AND nspname NOT IN ('public', 'information_schema') ORDER BY 1"
            )
            .compactMap { $0[0].text }
            #expect(schemas == [configuration.schema], "only the store's schema is left: \(schemas)")
        }
    }

    @Test func aStoreIsNotCreatedBesideAnApplicationsOwnTables() async throws {
        try await TestPostgres.withDatabase { url in
            try execute(url, "CREATE TABLE users (id integer PRIMARY KEY, name text); INSERT INTO users VALUES (1, 'Zoë')")
            let seed = try await BookStoreProcess.running(["seed", "--store", url.description])
            #expect(seed.status != 0)
            #expect(seed.stderr.contains("table users"), "says which: \(seed.stderr)")
            #expect(seed.stderr.contains("?schema="), "says what to do: \(seed.stderr)")
            #expect(try tables(url) == ["users"], "nothing created")
            #expect(try await storeValues(url, "SELECT name FROM users") == ["Zoë"])
            // Reset finds no store to remove, then refuses to create one there.
            let reset = try await BookStoreProcess.running(["reset", "--yes", "--store", url.description])
            #expect(reset.status != 0)
            #expect(reset.stderr.contains("cannot create a store") && reset.stderr.contains("table users"), "\(reset.stderr)")
            #expect(try tables(url) == ["users"], "nothing created or removed")
        }
    }

    @Test func migratingThroughAShadowSchemaAndResetAreRefusedWhileOtherObjectsAreInTheStoresSchema() async throws {
        try await TestPostgres.withDatabase { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "3", "--count", "40", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            // Added after the store was made: an application's table and a view over it.
            try execute(url, "CREATE TABLE zones (id integer PRIMARY KEY, name text); INSERT INTO zones VALUES (1, 'Süd')")
            try execute(url, "CREATE VIEW zone_names AS SELECT name FROM zones")
            let before = try await StoreSnapshot(url)

            let migrate = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(migrate.status != 0, "3 → 4 writes a new store in a shadow schema: \(migrate.stdout)")
            #expect(migrate.stderr.contains("table zones") && migrate.stderr.contains("view zone_names"), "says which: \(migrate.stderr)")
            #expect(migrate.stderr.contains("SET SCHEMA"), "says what to do: \(migrate.stderr)")
            try await expectUnchanged(url, since: before)
            try await expectNoLeftovers(url)

            let reset = try await BookStoreProcess.running(["reset", "--yes", "--store", url.description])
            #expect(reset.status != 0)
            #expect(reset.stderr.contains("table zones") && reset.stderr.contains("nothing was removed"), "\(reset.stderr)")
            try await expectUnchanged(url, since: before)

            // Moved out as the error says: the migration runs, and so does reset.
            try execute(url, "CREATE SCHEMA app; ALTER TABLE zones SET SCHEMA app; ALTER VIEW zone_names SET SCHEMA app")
            // A view in another schema over the store's table would go with the table a step replaces.
            try execute(url, "CREATE VIEW app.titles AS SELECT ztitle FROM public.zpublication")
            let withView = try await StoreSnapshot(url)
            let dependent = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(dependent.status != 0)
            #expect(dependent.stderr.contains("view app.titles in another schema depends on its tables"), "\(dependent.stderr)")
            try await expectUnchanged(url, since: withView)
            try execute(url, "DROP VIEW app.titles")

            let again = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(again.status == 0, "\(again.stderr)")
            let resetAgain = try await BookStoreProcess.running(["reset", "--yes", "--store", url.description])
            #expect(resetAgain.status == 0, "\(resetAgain.stderr)")
            #expect(try await storeValues(url, "SELECT name FROM app.zone_names") == ["Süd"])
        }
    }

    /// `copy` into a schema with an application's table is refused like creating a store there.
    @Test func aCopyIsNotWrittenBesideAnApplicationsOwnTables() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let sqlite = try copyFixture(version: 3, into: directory)
        try await TestPostgres.withDatabase { url in
            try execute(url, "CREATE SEQUENCE invoice_numbers")
            let copy = try await BookStoreProcess.running(["copy", "--replace", "--from", sqlite.description, "--to", url.description])
            #expect(copy.status != 0)
            #expect(copy.stderr.contains("sequence invoice_numbers") && copy.stderr.contains("?schema="), "\(copy.stderr)")
            #expect(try tables(url).isEmpty, "nothing created")
        }
    }

    func storeValues(_ url: StoreURL, _ sql: String) async throws -> [String] {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        let connection = try PostgresConnection(configuration: configuration)
        return try connection.rows(rawSQL: sql).compactMap { $0[0].text }
    }
}
