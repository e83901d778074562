import Logging
import Persistence

/// Writes the benchmark's `BookStore 2` store: `books` books, each with an author, and two
/// pages per book, made by SQL on the server (generated rows, no Swift per row).
///
/// Book `i` is "Generated book i" by one of a hundred authors (some with non-ASCII
/// names), priced from `i`; its pages are "Page 1 of generated book i." and "Page 2 …".
struct SourceStoreWriter {
    let model: ManagedObjectModel
    let books: Int
    let logger: Logger

    static let firstNames = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Ken", "Dennis", "Niklaus", "Kurt"]
    static let lastNames = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Thompson", "Ritchie", "Wirth", "Gödel"]

    func write(to url: StoreURL) async throws {
        // The framework creates the tables and metadata of an empty store of the version.
        let store = try await PersistentStore.open(url, model: model, options: .createIfMissing, logger: logger)
        let schema = store.schema
        let d = schema.dialect
        guard let book = schema.table(for: "Book"), let page = schema.table(for: "Page") else {
            preconditionFailure("BookStore 2 has Book and Page")
        }
        func column(_ table: EntityTable, _ property: String) -> String { table.column(for: property)!.name }
        let series = { (count: Int) in
            d.engine == .postgres
                ? "SELECT i FROM generate_series(1, CAST(\(count) AS bigint)) AS s(i)"
                : "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < \(count)) SELECT i FROM s"
        }
        func choice(_ names: [String], _ index: String) -> String {
            "CASE \(index) " + names.enumerated().map { "WHEN \($0.offset) THEN '\($0.element)'" }.joined(separator: " ") + " END"
        }
        let real = d.engine == .postgres ? "real" : "REAL"
        let books = """
            INSERT INTO \(book.name) (\(d.name("Z_PK")), \(d.name("Z_ENT")), \(d.name("Z_OPT")), \(column(book, "author")), \(column(book, "price")), \(column(book, "title"))) \
            SELECT i, \(book.entityNumber), 1, (\(choice(Self.firstNames, "i % 10"))) || ' ' || (\(choice(Self.lastNames, "(i / 10) % 10"))), \
            CAST((i * 7919) % 100000 AS \(real)) / 100, 'Generated book ' || i FROM (\(series(self.books))) n
            """
        let pages = """
            INSERT INTO \(page.name) (\(d.name("Z_PK")), \(d.name("Z_ENT")), \(d.name("Z_OPT")), \(column(page, "book")), \(column(page, "number")), \(column(page, "text"))) \
            SELECT i, \(page.entityNumber), 1, (i + 1) / 2, 2 - i % 2, 'Page ' || (2 - i % 2) || ' of generated book ' || ((i + 1) / 2) || '.' FROM (\(series(2 * self.books))) n
            """
        let keys = """
            UPDATE \(d.name("Z_PRIMARYKEY")) SET \(d.name("Z_MAX")) = CASE \(d.name("Z_ENT")) WHEN \(book.entityNumber) THEN \(self.books) \
            WHEN \(page.entityNumber) THEN \(2 * self.books) ELSE \(d.name("Z_MAX")) END
            """
        try await store.database.write { connection in
            try connection.execute(books)
            try connection.execute(pages)
            try connection.execute(keys)
        }
        if d.engine == .postgres {
            // Fresh statistics, as a store in use would have.
            try await store.database.writeWithoutTransaction { try $0.execute("ANALYZE") }
        } else if let database = store.database as? SQLiteDatabase {
            try await database.checkpoint()
        }
        await store.close()
    }
}
