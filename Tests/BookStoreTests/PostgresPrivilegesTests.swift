import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A deployment where the service connects as a role of its own, granted what it needs on
/// the store's schema and tables, while migrations run as the role that owns them (or a
/// superuser): after a migration the service's role can still use the store, the tables
/// belong to whom they belonged to, and a role granted one table has that table still and
/// no other.
///
/// PostgreSQL only: roles and grants are its own; a SQLite store is a file, and who may
/// use it is the file's permissions, which a migration's replacement file is given
/// (`FileSystem.copyOwnership`).
@Suite("PostgreSQL: a migration keeps the store's owners and grants")
struct PostgresPrivilegesTests {
    /// The roles of one test, named apart from every other test's (roles are the server's,
    /// not a database's).
    struct Roles {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        /// Owns the store's tables; no one logs in as it.
        var owner: String { "bookstore_owner_\(suffix)" }
        /// The service: uses every table.
        var service: String { "bookstore_service_\(suffix)" }
        /// A report: reads the pages only.
        var reader: String { "bookstore_reader_\(suffix)" }
        /// Migrates without being a superuser: owns the database (so its `public`) and is a
        /// member of the tables' owner.
        var migrator: String { "bookstore_migrator_\(suffix)" }
        var all: [String] { [owner, service, reader, migrator] }
        let password = "Pässwort-\(UUID().uuidString.prefix(6))"
    }

    @Test(arguments: [
        (4, false, true), (4, true, true), (2, false, true), (2, true, true), (4, false, false), (4, true, false), (2, false, false),
        (2, true, false),
    ])
    func aServiceRoleUsesTheMigratedStore(from version: Int, online: Bool, asSuperuser: Bool) async throws {
        try await TestPostgres.withDatabase { url in
            let roles = Roles()
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "\(version)", "--count", "40", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            guard case .postgres(let admin) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
            try Self.grantTheStore(url, to: roles)
            defer { Self.dropRoles(roles, at: url) }
            let before = try Self.privileges(url)

            // The URL as the store's, another user; the password as a parameter (a URL's
            // description never shows one).
            var migrator = admin
            migrator.user = roles.migrator
            let base = StoreURL.postgres(migrator).description
            let migrating = asSuperuser ? url.description : base + (base.contains("?") ? "&" : "?") + "password=migrator-\(roles.suffix)"
            let migrate = try await BookStoreProcess.running(["migrate", "--store", migrating] + (online ? ["--online"] : []))
            #expect(migrate.status == 0, "\(migrate.stderr.suffix(700))")

            let after = try Self.privileges(url)
            #expect(after.schema == before.schema, "the schema's owner and grants")
            for (table, privileges) in after.tables {
                // A table the migration made (BookStore 3 renamed ZBOOK) has what every
                // table of the store had: the service's use, not the report's pages.
                let expected = before.tables[table] ?? before.tables.values.reduce(before.tables.values.first!) { $0.intersection($1) }
                #expect(privileges == expected, "\(table): \(privileges.sorted()) after, expected \(expected.sorted())")
            }
            #expect(Set(after.tables.keys).contains("zpublication"))

            // The service, as itself: reads and writes the migrated store.
            guard case .postgres(var service) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
            service.user = roles.service
            service.password = roles.password
            let v5 = try #require(try loadModels().versions.version(named: "BookStore 5"))
            let store = try await PersistentStore.open(.postgres(service), model: v5, logger: quietLogger)
            let context = ManagedObjectContext(store: store, logger: quietLogger)
            let count = try await context.count(for: FetchRequest(entityName: "Publication"))
            #expect(count >= 40)
            let publication = try context.insertObject(entityName: "Publication")
            publication.setValue(.string("Written by the service's role"), forKey: "title")
            publication.setValue(.double(9.99), forKey: "price")
            try await context.save()
            #expect(try await context.count(for: FetchRequest(entityName: "Publication")) == count + 1)
            await store.close()

            // The report, as itself: its pages, and nothing it was not granted.
            var reader = service
            reader.user = roles.reader
            let connection = try PostgresConnection(configuration: reader)
            #expect(try connection.scalar("SELECT count(*) FROM zpage")?.double ?? 0 > 0)
            #expect(throws: DatabaseError.self) { try connection.execute("SELECT count(*) FROM zpublication") }
        }
    }

    /// A store replaced by `copy --replace` (from a SQLite file) keeps its tables' owners
    /// and grants: the copy's tables, made anew, get those of the tables of their names.
    @Test func aCopyThatReplacesTheStoreKeepsItsOwnersAndGrants() async throws {
        try await TestPostgres.withDatabase { url in
            let (directory, cleanUp) = temporaryDirectory()
            defer { cleanUp() }
            let source = sqliteStoreURL(in: directory)
            for store in [url, source] {
                let seed = try await BookStoreProcess.running(["seed", "--count", "20", "--store", store.description])
                #expect(seed.status == 0, "\(seed.stderr)")
            }
            let roles = Roles()
            try Self.grantTheStore(url, to: roles)
            defer { Self.dropRoles(roles, at: url) }
            let before = try Self.privileges(url)
            let copy = try await BookStoreProcess.running(["copy", "--from", source.description, "--to", url.description, "--replace"])
            #expect(copy.status == 0, "\(copy.stderr.suffix(700))")
            let after = try Self.privileges(url)
            #expect(after.tables == before.tables, "\(after.tables.filter { before.tables[$0.key] != $0.value })")
            #expect(after.tables["zpublication"]?.contains("\(roles.service) INSERT") == true)
        }
    }

    /// Roles for `roles`, and the store at `url` set up as a deployment would: its tables
    /// owned by `roles.owner`, the service granted their use, the report the pages, and
    /// the database (with its `public`) owned by `roles.migrator`, a member of the owner.
    static func grantTheStore(_ url: StoreURL, to roles: Roles) throws {
        guard case .postgres(let admin) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        let quoted = roles.all.map(\.quotedIdentifier)
        try execute(
            url,
            """
            CREATE ROLE \(quoted[0]) NOLOGIN;
            CREATE ROLE \(quoted[1]) LOGIN PASSWORD '\(roles.password)';
            CREATE ROLE \(quoted[2]) LOGIN PASSWORD '\(roles.password)';
            CREATE ROLE \(quoted[3]) LOGIN NOSUPERUSER PASSWORD 'migrator-\(roles.suffix)' IN ROLE \(quoted[0]);
            """
        )
        do {
            try execute(
                url,
                """
                ALTER DATABASE \((admin.database ?? "").quotedIdentifier) OWNER TO \(quoted[3]);
                GRANT USAGE ON SCHEMA public TO \(quoted[1]), \(quoted[2]);
                GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(quoted[1]);
                GRANT SELECT ON zpage TO \(quoted[2]);
                """
            )
            for table in try tables(url) {
                try execute(url, "ALTER TABLE public.\(table.quotedIdentifier) OWNER TO \(quoted[0])")
            }
        } catch {
            dropRoles(roles, at: url)
            throw error
        }
    }

    /// Roles are the server's, not the database's: each test drops its own.
    static func dropRoles(_ roles: Roles, at url: StoreURL) {
        let quoted = roles.all.map(\.quotedIdentifier).joined(separator: ", ")
        do {
            try execute(url, "REASSIGN OWNED BY \(quoted) TO CURRENT_USER; DROP OWNED BY \(quoted); DROP ROLE \(quoted)")
        } catch {
            Issue.record("the test's roles were left on the server: \(error)")
        }
    }

    /// A role that may not use the store's schema (here `public` without PostgreSQL 15's
    /// `USAGE` for everyone, as after a migration that did not carry it) sees no tables in
    /// it: PostgreSQL leaves the schema out of its search path. Opening, or creating, the
    /// store is refused with what the role lacks and the grant that gives it, not "there is
    /// no store" or "the schema holds other tables".
    @Test func aRoleThatMayNotUseTheSchemaIsToldWhatToGrant() async throws {
        try await TestPostgres.withDatabase { url in
            let roles = Roles()
            let seed = try await BookStoreProcess.running(["seed", "--count", "5", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let tables = try Self.tables(url)
            let role = roles.service.quotedIdentifier
            try Self.execute(url, "CREATE ROLE \(role) LOGIN PASSWORD '\(roles.password)'; REVOKE USAGE ON SCHEMA public FROM PUBLIC")
            defer {
                do { try Self.execute(url, "DROP ROLE \(role)") } catch { Issue.record("the test's role was left on the server: \(error)") }
            }
            guard case .postgres(var service) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
            (service.user, service.password) = (roles.service, roles.password)
            let v5 = try #require(try loadModels().versions.version(named: "BookStore 5"))
            for options in [PersistentStore.Options.existingOnly, .createIfMissing] {
                let error = await #expect(throws: StoreError.self) {
                    let store = try await PersistentStore.open(.postgres(service), model: v5, options: options, logger: quietLogger)
                    await store.close()
                }
                #expect(error?.message.contains("user '\(roles.service)' may not use schema 'public'") == true, "\(String(describing: error))")
                #expect(error?.hint?.contains("GRANT USAGE ON SCHEMA \"public\" TO \(role)") == true, "\(String(describing: error))")
            }
            #expect(try Self.tables(url) == tables, "nothing made")
        }
    }

    /// The owner and grants of the store's schema, and of each of its tables, as
    /// "owner alice" and "bob SELECT" (PUBLIC for everyone; the owner's own privileges
    /// are the owner's by right and left out).
    struct Privileges {
        var schema: Set<String>
        var tables: [String: Set<String>]
    }

    static func privileges(_ url: StoreURL) throws -> Privileges {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        let connection = try PostgresConnection(configuration: configuration)
        func described(_ rows: [Row]) -> [String: Set<String>] {
            var result: [String: Set<String>] = [:]
            for row in rows {
                guard let name = row[0].text, let owner = row[1].text else { continue }
                result[name, default: []].insert("owner \(owner)")
                if let grantee = row[2].text, grantee != owner, let privilege = row[3].text {
                    result[name]!.insert("\(grantee) \(privilege)\(row[4].text == "true" ? " WITH GRANT OPTION" : "")")
                }
            }
            return result
        }
        /// Each grant of `acl` on the objects `from` lists, one row each, beside the object's name and owner.
        func grants(name: String, owner: String, acl: String, from: String) -> String {
            """
            SELECT \(name), pg_get_userbyid(\(owner)), CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END,
                   a.privilege_type, a.is_grantable::text
            FROM \(from) LEFT JOIN LATERAL aclexplode(\(acl)) a ON true
            """
        }
        let schema = try connection.rows(
            rawSQL: grants(name: "n.nspname", owner: "n.nspowner", acl: "n.nspacl", from: "pg_namespace n") + " WHERE n.nspname = $1",
            [.text(configuration.schema)]
        )
        let tables = try connection.rows(
            rawSQL: grants(name: "c.relname", owner: "c.relowner", acl: "c.relacl", from: "pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace")
                + " WHERE n.nspname = $1 AND c.relkind = 'r'",
            [.text(configuration.schema)]
        )
        return Privileges(schema: described(schema)[configuration.schema] ?? [], tables: described(tables))
    }

    static func execute(_ url: StoreURL, _ sql: String) throws {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        try PostgresConnection(configuration: configuration).execute(rawSQL: sql)
    }

    static func tables(_ url: StoreURL) throws -> [String] {
        guard case .postgres(let configuration) = url.kind else { preconditionFailure("a PostgreSQL store URL") }
        let connection = try PostgresConnection(configuration: configuration)
        return try connection.rows(rawSQL: "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [.text(configuration.schema)])
            .compactMap { $0[0].text }
    }
}
