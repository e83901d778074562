/// Who owns a store's schema and tables, and what they grant other roles, read before a
/// migration changes the store and given to what it made.
///
/// A deployment often runs its service as a role of its own, granted `USAGE` on the
/// store's schema and `SELECT`, `INSERT`, `UPDATE`, `DELETE` on its tables, while
/// migrations run as the role that owns them, a member of it, or a superuser. The schema
/// and tables a migration makes are the migrating role's, with none of those grants:
/// without carrying them, the service would meet "permission denied" after every deploy
/// that migrates. So:
///
/// - the schema that replaces the store's gets the store schema's owner and grants (for
///   `public` on PostgreSQL 15: `pg_database_owner`, and `USAGE` for everyone);
/// - a table gets the owner and grants of the store's table of the same name;
/// - a table the store did not have (an entity renamed or added, a join table) gets the
///   grants every table of the store had, and their owner when they had one owner: a role
///   granted the whole store keeps the whole store, and one granted a single table gets no
///   more.
///
/// An owner the migrating role may not give a table to (it does not have that role's
/// privileges, and is no superuser) is left as it is, rather than fail the migration: the
/// table is then the migrating role's, with the grants, and every privilege on it granted
/// to the owner it would have had. A new owner needs `CREATE` on the schema;
/// in a schema the migrating role owns (a shadow schema) it is granted for the change and
/// taken back.
///
/// The grants go out as one statement list (one round trip); reading them takes two, and
/// a third where an owner changes.
///
/// ```swift
/// let privileges = try PostgresPrivileges.read("public", on: connection)
/// try privileges.give(to: "public_migrating_1a2b3c4d", on: connection)
/// try connection.execute("ALTER SCHEMA public RENAME TO …")
/// ```
///
/// Not carried: column grants, row security policies, default privileges (`ALTER DEFAULT
/// PRIVILEGES … IN SCHEMA`), and who granted what (each grant is recorded as the owner's).
/// Grants the new objects got from the migrating role's own default privileges stay.
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
    /// What an owner may do with a table, granted to one a table could not be given to.
    private static let tablePrivileges = ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"]

    /// Reads the owner and grants of `schema` and its tables, in one query.
    static func read(_ schema: String, on connection: any DatabaseConnection) throws -> PostgresPrivileges {
        // aclexplode of a NULL ACL (the owner's default privileges) is no rows: the object
        // is listed with its owner and no grants. The schema's row has a NULL name; a grant
        // to PUBLIC (grantee 0), a NULL grantee.
        let grantee = "CASE WHEN a.grantee = 0 THEN NULL ELSE pg_catalog.pg_get_userbyid(a.grantee) END"
        let rows = try connection.rows(
            rawSQL: """
                SELECT NULL::name, pg_catalog.pg_get_userbyid(n.nspowner), \(grantee), a.privilege_type, a.is_grantable::text
                FROM pg_catalog.pg_namespace n LEFT JOIN LATERAL pg_catalog.aclexplode(n.nspacl) a ON true WHERE n.nspname = $1
                UNION ALL
                SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner), \(grantee), a.privilege_type, a.is_grantable::text
                FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                LEFT JOIN LATERAL pg_catalog.aclexplode(c.relacl) a ON true
                WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
                """,
            [.text(schema)]
        )
        var privileges = PostgresPrivileges(schema: nil, tables: [:])
        for row in rows {
            guard let owner = row[1].text else { continue }
            let name = row[0].text
            var object = (name.map { privileges.tables[$0] } ?? privileges.schema) ?? Object(owner: owner, grants: [])
            if let privilege = row[3].text, Self.known.contains(privilege), row[2].text != owner {
                object.grants.insert(Grant(grantee: row[2].text, privilege: privilege, grantable: row[4].text == "true"))
            }
            if let name { privileges.tables[name] = object } else { privileges.schema = object }
        }
        return privileges
    }

    /// What a table the store did not have gets: the grants all of its tables had, and
    /// their owner when they had one.
    var commonToAllTables: Object? {
        guard let first = tables.values.first else { return nil }
        let owners = Set(tables.values.map(\.owner))
        let grants = tables.values.reduce(first.grants) { $0.intersection($1.grants) }
        return Object(owner: owners.count == 1 ? first.owner : nil, grants: grants)
    }

    /// Gives `schema` and its tables the owners and grants read: the schema about to
    /// replace the store's, or the store's own after an in-place step (tables it kept have
    /// theirs already; tables it made get ``commonToAllTables``). Gives nothing, in two
    /// round trips, where all is given already.
    func give(to schema: String, on connection: any DatabaseConnection) throws {
        let now = try Self.read(schema, on: connection)
        let quotedSchema = schema.quotedIdentifier
        let fallback = commonToAllTables
        var wantedTables: [(table: String, wanted: Object, current: Object)] = []
        for (table, current) in now.tables.sorted(by: { $0.key < $1.key }) {
            guard let wanted = tables[table] ?? fallback else { continue }
            wantedTables.append((table, wanted, current))
        }
        let newOwners = Set(wantedTables.compactMap { $0.wanted.owner == $0.current.owner ? nil : $0.wanted.owner })
        let owners = try OwnerChanges.read(newOwners, schema: schema, schemaOwner: now.schema?.owner, on: connection)
        var statements = owners.temporaryGrants.map { "GRANT CREATE ON SCHEMA \(quotedSchema) TO \(($0).quotedIdentifier)" }
        for (table, wanted, current) in wantedTables {
            var wanted = wanted
            if let owner = wanted.owner, !owners.allowed.contains(owner) {
                // Left to the migrating role; the owner it would have had gets the table's use.
                wanted.owner = nil
                if owner != current.owner {
                    wanted.grants.formUnion(Self.tablePrivileges.map { Grant(grantee: owner, privilege: $0, grantable: false) })
                }
            }
            statements += Self.statements(giving: wanted, over: current, on: "TABLE \(PostgresConfiguration.qualifiedName(table, inSchema: schema))")
        }
        statements += owners.temporaryGrants.map { "REVOKE CREATE ON SCHEMA \(quotedSchema) FROM \(($0).quotedIdentifier)" }
        // The schema last: the grants above were the migrating role's to give and take
        // while it owned the schema; a CREATE the schema grants comes back here.
        if let wanted = self.schema, let current = now.schema {
            statements += Self.statements(giving: wanted, over: current, on: "SCHEMA \(quotedSchema)")
        }
        guard !statements.isEmpty else { return }
        try connection.execute(rawSQL: statements.joined(separator: ";\n"))
    }

    /// The owner first, so the grants are recorded as the owner's.
    private static func statements(giving wanted: Object, over current: Object, on object: String) -> [String] {
        var statements: [String] = []
        let owner = wanted.owner ?? current.owner
        if let owner, owner != current.owner {
            statements.append("ALTER \(object) OWNER TO \(owner.quotedIdentifier)")
        }
        let missing = wanted.grants.subtracting(current.grants).filter { $0.grantee != owner }
        let byGrantee = Dictionary(grouping: missing) { GranteeKey(grantee: $0.grantee, grantable: $0.grantable) }
        for (key, grants) in byGrantee.sorted(by: { ($0.key.description, $0.key.grantable ? 1 : 0) < ($1.key.description, $1.key.grantable ? 1 : 0) })
        {
            let privileges = grants.map(\.privilege).sorted().joined(separator: ", ")
            statements.append("GRANT \(privileges) ON \(object) TO \(key.description)\(key.grantable ? " WITH GRANT OPTION" : "")")
        }
        return statements
    }

    private struct GranteeKey: Hashable {
        var grantee: String?
        var grantable: Bool
        /// The role as `GRANT` takes it.
        var description: String { grantee.map(\.quotedIdentifier) ?? "PUBLIC" }
    }

    /// Which tables' owners the migrating role may set, and to whom it grants `CREATE` on
    /// the schema for the change (`ALTER TABLE … OWNER TO` asks it of the new owner, unless
    /// a superuser runs it).
    private struct OwnerChanges {
        var allowed: Set<String> = []
        var temporaryGrants: [String] = []

        static func read(_ owners: Set<String>, schema: String, schemaOwner: String?, on connection: any DatabaseConnection) throws -> OwnerChanges {
            var changes = OwnerChanges()
            guard !owners.isEmpty else { return changes }
            let me = try connection.rows("SELECT current_user, rolsuper::text FROM pg_catalog.pg_roles WHERE rolname = current_user").first
            let isSuperuser = me?[1].text == "true"
            for owner in owners.sorted() {
                // USAGE, not MEMBER: a member that does not inherit the owner's privileges
                // could not write the tables it gave away (the cut-over's last catch-up
                // does). PostgreSQL 16 asks for the SET option too.
                let row = try connection.rows(
                    rawSQL: """
                        SELECT (pg_catalog.pg_has_role(r.oid, 'USAGE') AND (pg_catalog.current_setting('server_version_num')::int < 160000
                                                                           OR pg_catalog.pg_has_role(r.oid, 'SET')))::text,
                               pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE')::text
                        FROM pg_catalog.pg_roles r, pg_catalog.pg_namespace n WHERE r.rolname = $1 AND n.nspname = $2
                        """,
                    [.text(owner), .text(schema)]
                ).first
                guard let row, isSuperuser || row[0].text == "true" else { continue }
                if isSuperuser || row[1].text == "true" {
                    changes.allowed.insert(owner)
                } else if let schemaOwner, schemaOwner == me?[0].text {
                    changes.allowed.insert(owner)
                    changes.temporaryGrants.append(owner)
                }
            }
            return changes
        }
    }
}
