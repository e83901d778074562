/// Who owns a store's schema and tables, and what they grant other roles, read before a
/// migration changes the store and given to what it made.
///
/// A deployment often runs its service as a role of its own, granted `USAGE` on the
/// store's schema and `SELECT`, `INSERT`, `UPDATE`, `DELETE` on its tables, while
/// migrations run as the role that owns them or a superuser. The schema and tables a
/// migration makes are the migrating role's, with none of those grants: without carrying
/// them, the service would meet "permission denied" after every deploy that migrates. So:
///
/// - the schema that replaces the store's gets the store schema's owner and grants (for
///   `public` on PostgreSQL 15: `pg_database_owner`, and `USAGE` for everyone);
/// - a table gets the owner and grants of the store's table of the same name;
/// - a table the store did not have (an entity renamed or added, a join table) gets the
///   grants every table of the store had, and their owner when they had one owner: a role
///   granted the whole store keeps the whole store, and one granted a single table gets no
///   more.
///
/// Granting takes no lock that readers or writers wait for (the tables are new, or held by
/// the migration already), and all of it is one round trip.
///
/// ```swift
/// let privileges = try PostgresPrivileges.read("public", on: connection)
/// try connection.execute("ALTER SCHEMA public RENAME TO …")
/// try privileges.give(to: "shadow", on: connection)
/// ```
///
/// Not carried: column grants, row security policies and default privileges
/// (`ALTER DEFAULT PRIVILEGES … IN SCHEMA`), which go with a replaced schema.
struct PostgresPrivileges: Sendable {
    /// One grant: to a role (`nil` for `PUBLIC`), a privilege, and whether it may be passed on.
    struct Grant: Hashable, Sendable {
        var grantee: String?
        var privilege: String
        var grantable: Bool
    }

    /// An object's owner (`nil`: whoever owns it now) and what it grants others (not the
    /// owner's own privileges, which ownership gives).
    struct Object: Equatable, Sendable {
        var owner: String?
        var grants: Set<Grant>
    }

    var schema: Object?
    var tables: [String: Object]

    /// The privileges `GRANT` takes on a schema or table; anything else the catalog lists
    /// (a later server's) is left out rather than spelled into a statement.
    private static let known: Set<String> = ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "USAGE", "CREATE"]

    /// Reads the owner and grants of `schema` and its tables.
    static func read(_ schema: String, on connection: any DatabaseConnection) throws -> PostgresPrivileges {
        func objects(_ sql: String) throws -> [String: Object] {
            var objects: [String: Object] = [:]
            for row in try connection.rows(sql, [.text(schema)]) {
                guard let name = row[0].text, let owner = row[1].text else { continue }
                var object = objects[name] ?? Object(owner: owner, grants: [])
                if let privilege = row[3].text, Self.known.contains(privilege), row[2].text != owner {
                    object.grants.insert(Grant(grantee: row[2].text, privilege: privilege, grantable: row[4].text == "true"))
                }
                objects[name] = object
            }
            return objects
        }
        // aclexplode of a NULL ACL (the owner's default privileges) is no rows: the object
        // is listed with its owner and no grants.
        let grants = """
            CASE WHEN a.grantee = 0 THEN NULL ELSE pg_catalog.pg_get_userbyid(a.grantee) END, a.privilege_type, a.is_grantable::text
            """
        let schemas = try objects("""
            SELECT n.nspname, pg_catalog.pg_get_userbyid(n.nspowner), \(grants)
            FROM pg_catalog.pg_namespace n LEFT JOIN LATERAL pg_catalog.aclexplode(n.nspacl) a ON true WHERE n.nspname = $1
            """)
        let tables = try objects("""
            SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner), \(grants)
            FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN LATERAL pg_catalog.aclexplode(c.relacl) a ON true
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
            """)
        return PostgresPrivileges(schema: schemas[schema], tables: tables)
    }

    /// What a table the store did not have gets: the grants all of its tables had, and
    /// their owner when they had one.
    var commonToAllTables: Object? {
        guard let first = tables.values.first else { return nil }
        let owners = Set(tables.values.map(\.owner))
        let grants = tables.values.reduce(first.grants) { $0.intersection($1.grants) }
        return Object(owner: owners.count == 1 ? first.owner : nil, grants: grants)
    }

    /// Gives `schema` and its tables the owners and grants read: the store's own schema
    /// after an in-place step (tables it kept have theirs already; tables it made get
    /// ``commonToAllTables``), or the schema about to replace it.
    func give(to schema: String, on connection: any DatabaseConnection) throws {
        let now = try Self.read(schema, on: connection)
        let quotedSchema = PostgresConfiguration.quoteIdentifier(schema)
        var statements: [String] = []
        if let wanted = self.schema, let current = now.schema {
            statements += Self.statements(giving: wanted, over: current, on: "SCHEMA \(quotedSchema)")
        }
        let fallback = commonToAllTables
        for (table, current) in now.tables.sorted(by: { $0.key < $1.key }) {
            guard let wanted = tables[table] ?? fallback else { continue }
            statements += Self.statements(giving: wanted, over: current, on: "TABLE \(quotedSchema).\(PostgresConfiguration.quoteIdentifier(table))")
        }
        guard !statements.isEmpty else { return }
        try connection.execute(statements.joined(separator: ";\n"))
    }

    /// The owner first, so the grants are recorded as the owner's.
    private static func statements(giving wanted: Object, over current: Object, on object: String) -> [String] {
        var statements: [String] = []
        let owner = wanted.owner ?? current.owner
        if let owner, owner != current.owner {
            statements.append("ALTER \(object) OWNER TO \(PostgresConfiguration.quoteIdentifier(owner))")
        }
        let missing = wanted.grants.subtracting(current.grants).filter { $0.grantee != owner }
        let byGrantee = Dictionary(grouping: missing) { GranteeKey(grantee: $0.grantee, grantable: $0.grantable) }
        for (key, grants) in byGrantee.sorted(by: { ($0.key.description, $0.key.grantable ? 1 : 0) < ($1.key.description, $1.key.grantable ? 1 : 0) }) {
            let privileges = grants.map(\.privilege).sorted().joined(separator: ", ")
            statements.append("GRANT \(privileges) ON \(object) TO \(key.description)\(key.grantable ? " WITH GRANT OPTION" : "")")
        }
        return statements
    }

    private struct GranteeKey: Hashable {
        var grantee: String?
        var grantable: Bool
        /// The role as `GRANT` takes it.
        var description: String { grantee.map(PostgresConfiguration.quoteIdentifier) ?? "PUBLIC" }
    }
}
