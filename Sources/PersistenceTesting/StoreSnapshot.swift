import Foundation
import Persistence
import Testing

/// What a store holds, to tell whether anything changed and whether a migration left
/// something behind:
///
/// - SQLite: the bytes of every file in the store's folder (a folder, such as a
///   migration's work folder, as no bytes) and the store file's modification time;
/// - PostgreSQL: every table of the store's schema with its columns (type, nullability,
///   default) and its rows in key order (`z_metadata` and `z_primarykey` among them), the
///   database's schemas, so a shadow schema left behind shows;
/// - both: the store's schema objects — tables, indexes, constraints, sequences, triggers
///   — each as one line, and its metadata (model version, identifiers, hashes, UUID), so a
///   difference is said in words, not only as bytes.
public struct StoreSnapshot: Sendable, Equatable, CustomStringConvertible {
    /// Where the store was.
    public let engine: TestEngine
    /// The store file's name, or the store's schema.
    public let name: String
    /// SQLite: file name → bytes.
    public private(set) var files: [String: Data] = [:]
    /// SQLite: the store file's modification time.
    public private(set) var modificationDate: Date?
    /// PostgreSQL: the database's schemas, the system's own left out.
    public private(set) var schemas: [String] = []
    /// PostgreSQL: table → its columns (`name type`) as the first line, then its rows.
    public private(set) var tables: [String: [String]] = [:]
    /// Every schema object, one line each: `index zpage_zpublication_index: CREATE INDEX …`.
    public private(set) var schemaObjects: [String] = []
    /// The store's metadata as one line, `nil` where none can be read.
    public private(set) var metadata: String?

    /// Reads everything the store at `url` holds, without opening it (``PersistentStore/inspect(_:_:)``).
    ///
    /// - Throws: when the store cannot be read; an in-memory store has no snapshot.
    public init(_ url: StoreURL) async throws {
        switch url.kind {
        case .sqlite(let path):
            engine = .sqlite
            let store = URL(fileURLWithPath: path)
            let folder = store.deletingLastPathComponent()
            name = store.lastPathComponent
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                var isDirectory: ObjCBool = false
                let filePath = folder.appendingPathComponent(file).path
                _ = FileManager.default.fileExists(atPath: filePath, isDirectory: &isDirectory)
                files[file] = isDirectory.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: filePath))
            }
            modificationDate = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            if files[name] != nil {
                // A file that is no database (a damaged store, say) has its bytes alone.
                schemaObjects =
                    (try? await PersistentStore.inspect(url) { connection in
                        try connection.rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").map { row in
                            "\(row[0].text ?? "") \(row[1].text ?? "") on \(row[2].text ?? ""): \(row[3].text ?? "(automatic)")"
                        }
                    }) ?? ["(not readable as a database)"]
            }
        case .postgres(let configuration):
            engine = .postgres
            let schema = configuration.schema
            name = schema
            (schemas, tables) = try await PersistentStore.inspect(url) { connection in
                let schemas = try connection.rows(
                    """
                    SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1
                    """
                ).compactMap { $0[0].text }
                var tables: [String: [String]] = [:]
                // Tables only (views are schema objects, by their definition).
                let names = try connection.rows(
                    rawSQL: """
                        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY 1
                        """,
                    [.text(schema)]
                ).compactMap { $0[0].text }
                for table in names {
                    // The full type with its modifiers (varchar(40), numeric(12,2), timestamp(3)),
                    // which information_schema's data_type leaves out, and a collation of the
                    // column's own.
                    let columns = try connection.rows(
                        rawSQL: """
                            SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull::int, pg_get_expr(d.adbin, d.adrelid),
                                   CASE WHEN a.attcollation <> t.typcollation THEN co.collname END
                            FROM pg_attribute a
                            JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                            JOIN pg_type t ON t.oid = a.atttypid
                            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                            LEFT JOIN pg_collation co ON co.oid = a.attcollation
                            WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
                            """,
                        [.text(schema), .text(table)]
                    ).map { column in
                        "\(column[0].text ?? "?") \(column[1].text ?? "?")" + (column[4].text.map { " COLLATE \($0)" } ?? "")
                            + (column[2].int64 == 1 ? " NOT NULL" : "") + (column[3].text.map { " DEFAULT \($0)" } ?? "")
                    }
                    let qualified = PostgresConfiguration.qualifiedName(table, inSchema: schema)
                    let order = (1...max(columns.count, 1)).map(String.init).joined(separator: ", ")
                    let rows = try connection.rows(rawSQL: "SELECT * FROM \(qualified) ORDER BY \(order)").map { row in
                        row.values.map(StoreSnapshot.render).joined(separator: " | ")
                    }
                    tables[table] = [columns.joined(separator: ", ")] + rows
                }
                return (schemas, tables)
            }
            schemaObjects = try await PersistentStore.inspect(url) { connection in
                try StoreSnapshot.postgresSchemaObjects(schema, on: connection)
            }
        case .memory:
            throw StoreError(.unsupported, "an in-memory store has no snapshot", hint: "snapshot a SQLite or PostgreSQL store")
        }
        metadata = (try? await PersistentStore.metadata(at: url)).map(StoreSnapshot.describe)
    }

    /// Indexes, constraints, sequences (with their last values) and triggers of `schema`.
    static func postgresSchemaObjects(_ schema: String, on connection: any DatabaseConnection) throws -> [String] {
        let indexes = try connection.rows(rawSQL: "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1", [.text(schema)])
            .map { "index \($0[0].text ?? ""): \($0[1].text ?? "")" }
        let constraints = try connection.rows(
            rawSQL: """
                SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c
                JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1
                """,
            [.text(schema)]
        ).map { "constraint \($0[1].text ?? "") on \($0[0].text ?? ""): \($0[2].text ?? "")" }
        let sequences = try connection.rows(rawSQL: "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = $1", [.text(schema)])
            .map { "sequence \($0[0].text ?? ""): last value \($0[1].int64.map(String.init) ?? "none")" }
        let triggers = try connection.rows(
            rawSQL: """
                SELECT t.tgrelid::regclass::text, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t
                JOIN pg_class r ON r.oid = t.tgrelid JOIN pg_namespace n ON n.oid = r.relnamespace
                WHERE n.nspname = $1 AND NOT t.tgisinternal
                """,
            [.text(schema)]
        ).map { "trigger \($0[1].text ?? "") on \($0[0].text ?? ""): \($0[2].text ?? "")" }
        // Logged or not, and who may do what, of each table, view and sequence.
        let relations = try connection.rows(
            rawSQL: """
                SELECT c.relname, c.relkind::text, c.relpersistence::text, coalesce(c.relacl::text, '(default)') FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
                """,
            [.text(schema)]
        ).map { row in
            "relation \(row[0].text ?? "") (\(row[1].text ?? "")): \(row[2].text == "u" ? "unlogged" : row[2].text == "t" ? "temporary" : "logged"), grants \(row[3].text ?? "")"
        }
        let views = try connection.rows(
            rawSQL: """
                SELECT c.relname, pg_get_viewdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND c.relkind IN ('v', 'm')
                """,
            [.text(schema)]
        ).map { "view \($0[0].text ?? ""): \($0[1].text ?? "")" }
        let functions = try connection.rows(
            rawSQL: """
                SELECT p.oid::regprocedure::text, pg_get_functiondef(p.oid), coalesce(p.proacl::text, '(default)') FROM pg_proc p
                JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.prokind IN ('f', 'p')
                """,
            [.text(schema)]
        ).map { "function \($0[0].text ?? ""), grants \($0[2].text ?? ""): \($0[1].text ?? "")" }
        let schemaGrants = try connection.rows(
            rawSQL: "SELECT coalesce(nspacl::text, '(default)') FROM pg_namespace WHERE nspname = $1",
            [.text(schema)]
        )
        .map { "schema grants: \($0[0].text ?? "")" }
        return (indexes + constraints + sequences + triggers + relations + views + functions + schemaGrants).sorted()
    }

    /// The metadata as one line: what a store's identity and version are made of.
    static func describe(_ metadata: StoreMetadata) -> String {
        let hashes = metadata.versionHashes.keys.sorted().map { "\($0)=\(metadata.versionHashes[$0]?.base64EncodedString() ?? "")" }
        return "version \(metadata.modelVersionName ?? "unnamed"), identifiers \(metadata.versionIdentifiers), type \(metadata.storeType), "
            + "UUID \(metadata.storeUUID), hashes \(hashes.joined(separator: " "))"
    }

    static func render(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .text(let value): "'\(value)'"
        case .blob(let value): "x'" + value.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// What a migration may have left beside the store: files in its folder other than
    /// stores (work folders, WAL and lock files), or schemas named after the store's
    /// schema (`<schema>_migrating_…` shadows, `<schema>_replaced_…` old tables,
    /// `<schema>_capturing_…` change captures with their triggers).
    public var leftovers: [String] {
        switch engine {
        case .sqlite: files.keys.filter { !$0.hasSuffix(".sqlite") }.sorted()
        case .postgres:
            schemas.filter { schema in PostgresShadowName.Kind.allCases.contains { schema.hasPrefix(PostgresShadowName.prefix(of: name, kind: $0)) } }
        }
    }

    /// How `other` differs from this snapshot, in a few words per difference.
    public func differences(from other: StoreSnapshot) -> [String] {
        var result: [String] = []
        for file in Set(files.keys).union(other.files.keys).sorted() where files[file] != other.files[file] {
            switch (files[file], other.files[file]) {
            case (nil, _): result.append("\(file) appeared")
            case (_, nil): result.append("\(file) vanished")
            case (let a?, let b?): result.append("\(file): \(a.count) bytes became \(b.count) bytes, not the same")
            }
        }
        if modificationDate != other.modificationDate { result.append("the store's modification time changed") }
        if metadata != other.metadata { result.append("metadata \(metadata ?? "none") became \(other.metadata ?? "none")") }
        for object in Set(schemaObjects).symmetricDifference(other.schemaObjects).sorted() {
            result.append(schemaObjects.contains(object) ? "\(object) vanished" : "\(object) appeared")
        }
        if schemas != other.schemas { result.append("schemas \(schemas) became \(other.schemas)") }
        for table in Set(tables.keys).union(other.tables.keys).sorted() where tables[table] != other.tables[table] {
            switch (tables[table], other.tables[table]) {
            case (nil, _): result.append("table \(table) appeared")
            case (_, nil): result.append("table \(table) vanished")
            case (let a?, let b?):
                if a.first != b.first { result.append("table \(table): columns \(a.first ?? "") became \(b.first ?? "")") }
                let changed = Set(a.dropFirst()).symmetricDifference(b.dropFirst())
                if !changed.isEmpty || a.count != b.count {
                    result.append("table \(table): \(a.count - 1) rows became \(b.count - 1), e.g. \(changed.sorted().prefix(3))")
                }
            }
        }
        return result
    }

    /// Whether the snapshot found no store at all (nothing to compare by).
    public var isEmpty: Bool {
        switch engine {
        case .sqlite: files[name] == nil
        case .postgres: tables.isEmpty
        }
    }

    /// What the snapshot holds, for a failed expectation: the files, or the schemas and each table's row count.
    public var description: String {
        if engine == .sqlite { return "files \(files.keys.sorted())" }
        return "schemas \(schemas), tables \(tables.keys.sorted().map { "\($0) (\(max((tables[$0]?.count ?? 1) - 1, 0)) rows)" })"
    }
}

/// Expects the store at `url` to hold exactly what `before` found, with nothing new
/// beside it (no work folder, WAL or lock file, no shadow schema).
public func expectUnchanged(_ url: StoreURL, since before: StoreSnapshot, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    #expect(!before.isEmpty, "the snapshot before found no store at \(url)", sourceLocation: sourceLocation)
    let after = try await StoreSnapshot(url)
    let differences = before.differences(from: after)
    #expect(differences.isEmpty, "the store changed: \(differences.joined(separator: "; "))", sourceLocation: sourceLocation)
}

/// Expects nothing beside the store at `url`: no work folder, WAL or lock file, no shadow schema.
public func expectNoLeftovers(_ url: StoreURL, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let leftovers = try await StoreSnapshot(url).leftovers
    #expect(leftovers.isEmpty, "left beside the store: \(leftovers)", sourceLocation: sourceLocation)
}
