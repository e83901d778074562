import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The store's tables, as `sqlite3 store.sqlite .schema` (or psql's `\\d`) shows them:
/// Core Data's layout, in lower case on PostgreSQL.
@Suite("Store schema")
struct SchemaTests {
    /// Runs a query the way an outside tool would: on SQLite through a connection of its
    /// own, opened read-only; on PostgreSQL through a session of its own; in memory on the
    /// store's connection (nothing else can see it).
    func inspect(_ container: PersistentContainer, _ sql: String, _ arguments: [DatabaseValue] = []) async throws -> [Row] {
        switch container.store.url.kind {
        case .sqlite(let path):
            let connection = try SQLiteConnection(path: path, mode: .readOnly)
            return try connection.rows(rawSQL: sql, arguments)
        case .postgres(let configuration):
            let database = try await PostgresDatabase.open(configuration, readerCount: 0, readOnly: true)
            let sql = PostgresDialect().numberingPlaceholders(sql)
            let rows = try await database.read { try $0.rows(rawSQL: sql, arguments) }
            await database.close()
            return rows
        case .memory:
            return try await container.sql(sql, arguments)
        }
    }

    func isPostgres(_ container: PersistentContainer) -> Bool { container.store.schema.dialect is PostgresDialect }

    /// A Core Data name as the store spells it.
    func name(_ container: PersistentContainer, _ coreDataName: String) -> String {
        container.store.schema.dialect.name(coreDataName)
    }

    func tables(_ container: PersistentContainer) async throws -> Set<String> {
        let sql =
            isPostgres(container)
            ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            : "SELECT name FROM sqlite_master WHERE type = 'table'"
        return Set(try await inspect(container, sql).compactMap { $0[0].text })
    }

    /// The columns of a table, in order, with their declared types; names as Core Data
    /// spells them (PostgreSQL stores them in lower case).
    func columnsAndTypes(_ container: PersistentContainer, _ table: String) async throws -> [(name: String, type: String)] {
        let rows =
            isPostgres(container)
            ? try await inspect(
                container,
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
                [.text(name(container, table))]
            )
            : try await inspect(container, "PRAGMA table_info(\(table))").map { Row([$0[1], $0[2]]) }
        return rows.map { (($0[0].text ?? "").uppercased(), $0[1].text ?? "") }
    }

    func columns(_ container: PersistentContainer, _ table: String) async throws -> [String] {
        try await columnsAndTypes(container, table).map(\.name)
    }

    func columnTypes(_ container: PersistentContainer, _ table: String) async throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try await columnsAndTypes(container, table).map { ($0.name, $0.type) })
    }

    /// Index name → table, for the indexes the store created (not those of primary keys),
    /// as Core Data spells them.
    func indexes(_ container: PersistentContainer) async throws -> [String: String] {
        let sql =
            isPostgres(container)
            ? "SELECT indexname, tablename FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey'"
            : "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        return Dictionary(
            uniqueKeysWithValues: try await inspect(container, sql).map { (($0[0].text ?? "").uppercased(), ($0[1].text ?? "").uppercased()) }
        )
    }

    /// The columns an index covers, in order.
    func indexColumns(_ container: PersistentContainer, _ index: String) async throws -> [String] {
        if isPostgres(container) {
            return try await inspect(
                container,
                """
                SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
                JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON true
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE c.relname = ? ORDER BY k.position
                """,
                [.text(name(container, index))]
            ).compactMap { $0[0].text?.uppercased() }
        }
        return try await inspect(container, "PRAGMA index_info(\(index))").compactMap { $0[2].text }
    }

    /// The primary key's columns of a table.
    func primaryKey(_ container: PersistentContainer, _ table: String) async throws -> [String] {
        if isPostgres(container) {
            return try await inspect(
                container,
                """
                SELECT k.column_name FROM information_schema.table_constraints t
                JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema
                WHERE t.table_schema = current_schema() AND t.table_name = ? AND t.constraint_type = 'PRIMARY KEY' ORDER BY k.ordinal_position
                """,
                [.text(name(container, table))]
            ).compactMap { $0[0].text?.uppercased() }
        }
        return try await inspect(container, "PRAGMA table_info(\(table))").filter { ($0[5].int64 ?? 0) > 0 }.compactMap { $0[1].text }
    }

    @Test(arguments: TestBackend.allCases)
    func tablesAreCoreDataNamed(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let tables = try await tables(container)
            #expect(
                tables
                    == Set(
                        [
                            "ZAUTHOR", "ZBOOK", "ZITEM", "ZPAGE", "ZPORTRAIT", "ZSAMPLE", "ZSHELF",
                            "Z_1BOOKS", "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE",
                        ].map { name(container, $0) }
                    )
            )
            // Sub-entities share their root's table.
            #expect(!tables.contains(name(container, "ZTOOL")) && !tables.contains(name(container, "ZGADGET")))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func entityColumns(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let book = try await columns(container, "ZBOOK")
            #expect(Array(book.prefix(3)) == ["Z_PK", "Z_ENT", "Z_OPT"])
            // The transient `cached` has no column; the to-one `shelf` is a foreign key.
            #expect(Set(book) == ["Z_PK", "Z_ENT", "Z_OPT", "ZSHELF", "ZISBN", "ZPRICE", "ZTITLE"])
            let pg = isPostgres(container)
            let types = try await columnTypes(container, "ZBOOK")
            #expect(types["Z_PK"] == (pg ? "bigint" : "INTEGER"))
            #expect(types["ZTITLE"] == (pg ? "text" : "VARCHAR"))
            #expect(types["ZPRICE"] == (pg ? "real" : "FLOAT"))
            #expect(types["ZSHELF"] == (pg ? "bigint" : "INTEGER"))
            #expect(try await primaryKey(container, "ZBOOK") == ["Z_PK"], "Z_PK is the primary key")

            #expect(Set(try await columns(container, "ZPAGE")) == ["Z_PK", "Z_ENT", "Z_OPT", "ZBOOK", "ZNUMBER", "ZTEXT"])
            #expect(Set(try await columns(container, "ZAUTHOR")) == ["Z_PK", "Z_ENT", "Z_OPT", "ZPORTRAIT", "ZBORN", "ZNAME"])
            #expect(Set(try await columns(container, "ZPORTRAIT")) == ["Z_PK", "Z_ENT", "Z_OPT", "ZAUTHOR", "ZIMAGE"])
            #expect(Set(try await columns(container, "ZSHELF")) == ["Z_PK", "Z_ENT", "Z_OPT", "ZLABEL"])
            #expect(
                Set(try await columns(container, "ZSAMPLE")) == [
                    "Z_PK", "Z_ENT", "Z_OPT", "ZI16", "ZI32", "ZI64", "ZDOUBLE", "ZFLOAT", "ZDECIMAL",
                    "ZSTRING", "ZFLAG", "ZDATE", "ZDATA", "ZUUID", "ZURI",
                ]
            )
            let sample = try await columnTypes(container, "ZSAMPLE")
            if pg {
                // PostgreSQL's own types, so values keep their meaning for other clients.
                #expect(sample["ZI16"] == "smallint" && sample["ZI32"] == "integer" && sample["ZI64"] == "bigint")
                #expect(sample["ZFLAG"] == "boolean" && sample["ZDECIMAL"] == "numeric")
                #expect(sample["ZDOUBLE"] == "double precision" && sample["ZFLOAT"] == "real")
                #expect(sample["ZDATE"] == "timestamp with time zone")
                #expect(sample["ZDATA"] == "bytea" && sample["ZUUID"] == "uuid")
                #expect(sample["ZSTRING"] == "text" && sample["ZURI"] == "text")
            } else {
                #expect(sample["ZI16"] == "INTEGER" && sample["ZI64"] == "INTEGER" && sample["ZFLAG"] == "INTEGER")
                #expect(sample["ZDOUBLE"] == "FLOAT" && sample["ZFLOAT"] == "FLOAT")
                #expect(sample["ZDATE"] == "TIMESTAMP")
                #expect(sample["ZDATA"] == "BLOB" && sample["ZUUID"] == "BLOB")
                #expect(sample["ZSTRING"] == "VARCHAR" && sample["ZURI"] == "VARCHAR")
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func foreignKeysAreIndexed(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let byName = try await indexes(container)
            #expect(byName["ZPAGE_ZBOOK_INDEX"] == "ZPAGE")
            #expect(byName["ZBOOK_ZSHELF_INDEX"] == "ZBOOK")
            #expect(byName["ZAUTHOR_ZPORTRAIT_INDEX"] == "ZAUTHOR")
            #expect(byName["ZPORTRAIT_ZAUTHOR_INDEX"] == "ZPORTRAIT")
            let pageIndex = try await indexColumns(container, "ZPAGE_ZBOOK_INDEX")
            #expect(pageIndex == ["ZBOOK"])
            // Attributes get no index of their own.
            #expect(byName.keys.filter { $0.hasPrefix("ZBOOK_ZTITLE") }.isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func manyToManyJoinTable(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            // Author (Z_ENT 1) owns Author.books ↔ Book (Z_ENT 2).authors, as Core Data names it.
            let columns = try await columns(container, "Z_1BOOKS")
            #expect(columns == ["Z_1AUTHORS", "Z_2BOOKS"])
            let schema = container.store.schema
            #expect(schema.joinTable(entity: "Author", relationship: "books")?.name == name(container, "Z_1BOOKS"))
            #expect(schema.joinTable(entity: "Book", relationship: "authors")?.name == name(container, "Z_1BOOKS"))

            // A row per pair, with the primary keys of both ends.
            let context = container.newContext()
            let author = try context.insertObject(entityName: "Author")
            author.setValue("Ann", forKey: "name")
            let book = try context.insertObject(entityName: "Book")
            book.setValue("B", forKey: "title")
            book.addDestination(author, forKey: "authors")
            try await context.save()
            let rows = try await container.sql("SELECT Z_1AUTHORS, Z_2BOOKS FROM Z_1BOOKS")
            #expect(rows.map { [$0[0].int64, $0[1].int64] } == [[author.objectID.primaryKey, book.objectID.primaryKey]])
        }
    }

    @Test(arguments: TestBackend.allCases)
    func hierarchySharesRootTable(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            #expect(Set(try await columns(container, "ZITEM")) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZVOLTAGE", "ZWEIGHT"])
            let indexes = try await indexes(container)
            #expect(indexes["ZITEM_Z_ENT_INDEX"] == "ZITEM")
            #expect(try await indexColumns(container, "ZITEM_Z_ENT_INDEX") == ["Z_ENT"])
            // Only the table of a hierarchy needs the Z_ENT index.
            #expect(indexes["ZBOOK_Z_ENT_INDEX"] == nil)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func primaryKeyTable(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let rows = try await inspect(container, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            let described = rows.map { "\($0[0].int64 ?? -1) \($0[1].text ?? "?") \($0[2].int64 ?? -1) \($0[3].int64 ?? -1)" }
            // Entities numbered as Core Data numbers them: each inheritance tree from its root,
            // roots and siblings in name order; a sub-entity's Z_SUPER is its parent's number.
            #expect(
                described == [
                    "1 Author 0 0", "2 Book 0 0", "3 Item 0 0", "4 Gadget 3 0", "5 Tool 3 0",
                    "6 Page 0 0", "7 Portrait 0 0", "8 Sample 0 0", "9 Shelf 0 0",
                ]
            )
            let item = rows.first { $0[1].text == "Item" }?[0].int64
            let toolSuper = rows.first { $0[1].text == "Tool" }?[2].int64
            #expect(item != nil && toolSuper == item)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func zMaxAdvancesWithInserts(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            for i in 0..<3 {
                try context.insertObject(entityName: "Book").setValue(.string("B\(i)"), forKey: "title")
            }
            try await context.save()
            #expect(try await container.zMax("Book") == 3)
            for i in 0..<2 {
                try context.insertObject(entityName: "Book").setValue(.string("C\(i)"), forKey: "title")
            }
            try context.insertObject(entityName: "Tool")
            try context.insertObject(entityName: "Gadget")
            try context.insertObject(entityName: "Tool")
            try await context.save()
            #expect(try await container.zMax("Book") == 5)
            #expect(try await container.int("SELECT max(Z_PK) FROM ZBOOK") == 5)
            // The hierarchy draws keys from its root's counter.
            #expect(try await container.zMax("Item") == 3)
            #expect(try await container.int("SELECT max(Z_PK) FROM ZITEM") == 3)
            #expect(try await container.zMax("Page") == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func metadataRow(backend: TestBackend) async throws {
        let model = try LibraryModel.make()
        try await withContainer(backend, model: model) { container in
            let rows = try await inspect(container, "SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA")
            try #require(rows.count == 1)
            let row = rows[0]
            #expect(row[0].int64 == 1)
            let blob = try #require(row[2].blob)
            #expect(blob.starts(with: Data("bplist00".utf8)), "Z_PLIST is a binary property list")
            let plist = try #require(try PropertyListSerialization.propertyList(from: blob, options: [], format: nil) as? [String: Any])
            #expect(plist["NSStoreUUID"] as? String == row[1].text)
            #expect(UUID(uuidString: row[1].text ?? "") != nil)
            #expect(plist["NSStoreType"] as? String == ["sqlite": "SQLite", "memory": "InMemory", "postgres": "PostgreSQL"][backend.rawValue])
            #expect(plist["NSStoreModelVersionIdentifiers"] as? [String] == ["1"])
            let hashes = try #require(plist["NSStoreModelVersionHashes"] as? [String: Data])
            #expect(hashes == model.entityVersionHashes)
            #expect(Set(hashes.keys) == Set(model.entities.map(\.name)))
            for (entity, hash) in hashes {
                #expect(hash.count == 32, "the version hash of \(entity) is a SHA-256 digest")
            }
        }
    }

    @Test func walJournalMode() async throws {
        try await withContainer(.sqlite, model: try LibraryModel.make()) { container in
            let outside = try await inspect(container, "PRAGMA journal_mode").first?[0].text
            let inside = try await container.sql("PRAGMA journal_mode").first?[0].text
            #expect(outside == "wal")
            #expect(inside == "wal")
        }
    }
}
