/// What a PostgreSQL schema holds, sorted into the store's tables and everything else.
///
/// A store keeps its schema to itself, as a SQLite store its file: a migration step that
/// writes a new store builds it in a shadow schema and drops the schema it replaces, with
/// whatever else was in it. So creating a store, replacing one by a copy, destroying one
/// and migrating one through a shadow schema all refuse while the schema holds objects that
/// are not the store's, or views and foreign keys elsewhere depend on the store's tables
/// (``refuse(_:configuration:store:)``), and change nothing.
///
/// ```swift
/// let contents = try PostgresSchemaContents.read(configuration.schema, on: connection)
/// try contents.refuse(.creating, configuration: configuration, store: url) // "… it holds table users, …"
/// ```
struct PostgresSchemaContents: Sendable {
    /// The schema.
    let schema: String
    /// Whether the schema holds a store (a `z_metadata` table).
    let holdsStore: Bool
    /// The store's tables: Core Data's `z_` tables (`z_metadata`, `z_primarykey`, join
    /// tables) and one per entity `z_primarykey` names (`zpublication`).
    let storeTables: [String]
    /// Every other table, view, sequence, function and type, described as "table users".
    let otherObjects: [String]
    /// Views and foreign keys in other schemas that depend on the store's tables, described
    /// as "view reports.sales": dropping the tables would drop them too.
    let dependents: [String]

    /// The names of `schema`'s tables (partitioned ones too), by name.
    static func tableNames(in schema: String, on connection: any DatabaseConnection) throws -> [String] {
        try connection.rows(rawSQL: "SELECT tablename::text FROM pg_catalog.pg_tables WHERE schemaname = $1 ORDER BY tablename", [.text(schema)])
            .compactMap {
                $0[0].text
            }
    }

    /// `tables` in the order a migration locks them: `z_primarykey` first, as every save
    /// takes it first (the model-version check), then by name.
    static func inLockOrder(_ tables: [String]) -> [String] {
        tables.sorted { ($0 == "z_primarykey" ? 0 : 1, $0) < ($1 == "z_primarykey" ? 0 : 1, $1) }
    }

    /// Reads what `schema` holds; an absent schema holds nothing.
    static func read(_ schema: String, on connection: any DatabaseConnection) throws -> PostgresSchemaContents {
        let relations = try connection.rows(
            rawSQL: """
                SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c') ORDER BY c.relname
                """,
            [.text(schema)]
        ).compactMap { row in row[0].text.map { (name: $0, kind: row[1].text ?? "") } }
        let holdsStore = relations.contains { $0.name == "z_metadata" && $0.kind == "r" }
        // Entity tables by their shape, not by Z_PRIMARYKEY's names: a store copied from
        // Apple's may list a renamed entity under its old name there.
        let entityTables =
            holdsStore
            ? Set(
                try connection.rows(
                    rawSQL: """
                        SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attname IN ('z_pk', 'z_ent', 'z_opt') AND NOT a.attisdropped
                        GROUP BY c.relname HAVING count(*) = 3
                        """,
                    [.text(schema)]
                ).compactMap { $0[0].text }.filter { $0.hasPrefix("z") }
            ) : []
        var storeTables: [String] = []
        var others: [String] = []
        for relation in relations {
            let isStoreTable =
                holdsStore && relation.kind == "r"
                && (Self.bookkeepingTables.contains(relation.name) || Self.isJoinTable(relation.name) || entityTables.contains(relation.name))
            if isStoreTable {
                storeTables.append(relation.name)
            } else {
                others.append("\(Self.kindName(relation.kind)) \(relation.name)")
            }
        }
        let routines = try connection.rows(
            rawSQL: """
                SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1
                """,
            [.text(schema)]
        ).compactMap { $0[0].text.map { "function \($0)" } }
        let types = try connection.rows(
            rawSQL: """
                SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                WHERE n.nspname = $1 AND t.typtype IN ('e', 'd', 'r', 'm') ORDER BY 1
                """,
            [.text(schema)]
        ).compactMap { $0[0].text.map { "type \($0)" } }
        let dependents =
            holdsStore
            ? try connection.rows(
                rawSQL: """
                    SELECT DISTINCT CASE v.relkind WHEN 'm' THEN 'materialized view ' ELSE 'view ' END || format('%I.%I', vn.nspname, v.relname)
                    FROM pg_depend d JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
                    JOIN pg_class v ON v.oid = r.ev_class JOIN pg_namespace vn ON vn.oid = v.relnamespace
                    JOIN pg_class t ON d.refclassid = 'pg_class'::regclass AND t.oid = d.refobjid JOIN pg_namespace tn ON tn.oid = t.relnamespace
                    WHERE tn.nspname = $1 AND vn.nspname <> $1
                    UNION
                    SELECT format('foreign key %I of %I.%I', c.conname, n.nspname, k.relname)
                    FROM pg_constraint c JOIN pg_class k ON k.oid = c.conrelid JOIN pg_namespace n ON n.oid = k.relnamespace
                    JOIN pg_class t ON t.oid = c.confrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
                    WHERE c.contype = 'f' AND tn.nspname = $1 AND n.nspname <> $1
                    ORDER BY 1
                    """,
                [.text(schema)]
            ).compactMap { $0[0].text } : []
        return PostgresSchemaContents(
            schema: schema,
            holdsStore: holdsStore,
            storeTables: storeTables,
            otherObjects: others + routines + types,
            dependents: dependents
        )
    }

    /// Drops the store's tables (none when the schema holds no store), in the caller's
    /// transaction; returns how many. Call it after ``refuse(_:configuration:store:)``: only
    /// the store is in the schema, so nothing else goes with them.
    func dropStoreTables(on connection: any DatabaseConnection) throws -> Int {
        guard !storeTables.isEmpty else { return 0 }
        // One statement, without CASCADE: whatever else depends on the tables stops it.
        let tables = storeTables.map { PostgresConfiguration.qualifiedName($0, inSchema: schema) }
        try connection.execute(rawSQL: "DROP TABLE \(tables.joined(separator: ", "))")
        return storeTables.count
    }

    /// Core Data's own tables beside the entity and join tables.
    private static let bookkeepingTables: Set<String> = ["z_metadata", "z_primarykey", "z_modelcache"]

    /// A many-to-many join table: `z_<entity number><relationship>`.
    private static func isJoinTable(_ name: String) -> Bool {
        name.hasPrefix("z_") && name.dropFirst(2).first?.isNumber == true
    }

    private static func kindName(_ relkind: String) -> String {
        switch relkind {
        case "r", "p": "table"
        case "v": "view"
        case "m": "materialized view"
        case "S": "sequence"
        case "f": "foreign table"
        default: "type"
        }
    }

    /// What is about to happen to the schema, for the error that refuses it.
    enum Intent {
        /// A new store is created in the schema (or replaces the store there, by a copy).
        case creating
        /// A migration step writes a new store in a shadow schema that replaces this one.
        case migrating
        /// The store's tables are dropped.
        case destroying
    }

    /// Throws when the schema holds anything but the store, or something in another schema
    /// depends on the store's tables: which objects, and what to do.
    func refuse(_ intent: Intent, configuration: PostgresConfiguration, store: StoreURL) throws {
        guard !otherObjects.isEmpty || !dependents.isEmpty else { return }
        var what: [String] = []
        if !otherObjects.isEmpty { what.append("it \(intent == .creating ? "holds" : "also holds") \(Self.list(otherObjects))") }
        if !dependents.isEmpty { what.append("\(Self.list(dependents)) in another schema depend\(dependents.count == 1 ? "s" : "") on its tables") }
        let found = what.joined(separator: ", and ")
        var todo: [String] = []
        if !otherObjects.isEmpty {
            todo.append(
                "move what is not the store's to a schema of its own (ALTER TABLE … SET SCHEMA …, likewise ALTER VIEW, SEQUENCE, FUNCTION, TYPE)"
            )
        }
        if !dependents.isEmpty { todo.append("drop what depends on the store's tables and create it again afterwards") }
        let place = "schema '\(schema)' of database '\(configuration.databaseDescription)' at \(configuration.serverDescription)"
        switch intent {
        case .creating:
            throw StoreError(
                .sharedSchema,
                "cannot create a store in \(place): \(found); a store keeps its schema to itself",
                hint: "name an empty or new schema with ?schema=NAME in the store URL, or \(todo.joined(separator: ", and ")); nothing was created",
                store: store.description
            )
        case .migrating:
            throw StoreError(
                .sharedSchema,
                "cannot migrate the store in \(place): \(found), which a step that writes a new store would drop with the tables and schema it replaces",
                hint: "\(todo.joined(separator: ", and ")), then migrate again; nothing was changed",
                store: store.description
            )
        case .destroying:
            throw StoreError(
                .sharedSchema,
                "cannot remove the store in \(place): \(found), which removing its tables would drop; a store keeps its schema to itself",
                hint: "\(todo.joined(separator: ", and ")), then try again; nothing was removed",
                store: store.description
            )
        }
    }

    /// The first five of `objects`, and how many more.
    private static func list(_ objects: [String]) -> String {
        let shown = objects.prefix(5).joined(separator: ", ")
        return objects.count > 5 ? "\(shown) and \(objects.count - 5) more" : shown
    }
}
