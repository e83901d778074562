import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A SQL literal carries its values with its text: each engine numbers the placeholders,
/// quotes the names, and binds the values in the order they appear.
@Suite("SQL literals")
struct SQLLiteralTests {
    @Test func valuesAreBoundAndNumberedByTheEngine() {
        let minimum: Int64 = 3
        let where_: SQL = "\(identifier: "ZNUMBER") > \(minimum) AND \(identifier: "ZTEXT") <> \("It's")"
        let query: SQL = "SELECT \(storeName: "Z_PK") FROM \(identifier: "ZPAGE") WHERE \(where_) LIMIT \(raw: "10")"
        #expect(query.argumentCount == 2)
        #expect(query.arguments == [.integer(3), .text("It's")])
        let sqlite = query.rendered(for: SQLiteDialect())
        #expect(sqlite.text == "SELECT Z_PK FROM ZPAGE WHERE ZNUMBER > ? AND ZTEXT <> ? LIMIT 10")
        let postgres = query.rendered(for: PostgresDialect())
        // PostgreSQL folds unquoted names to lower case: a name with capitals keeps them in quotes.
        #expect(postgres.text == "SELECT z_pk FROM \"ZPAGE\" WHERE \"ZNUMBER\" > $1 AND \"ZTEXT\" <> $2 LIMIT 10")
        #expect(postgres.arguments == [.integer(3), .text("It's")])
        #expect(query.description == "SELECT Z_PK FROM ZPAGE WHERE ZNUMBER > ? AND ZTEXT <> ? LIMIT 10")
    }

    @Test func fragmentsKeepTheirValuesInOrder() {
        let conditions: [SQL] = [1, 2, 3].map { "x = \($0)" }
        let query: SQL = "SELECT 1 WHERE \(conditions.joined(separator: " OR ")) AND y IN (\(list: [.text("a"), .null]))"
        let rendered = query.rendered(for: PostgresDialect())
        #expect(rendered.text == "SELECT 1 WHERE x = $1 OR x = $2 OR x = $3 AND y IN ($4, $5)")
        #expect(rendered.arguments == [.integer(1), .integer(2), .integer(3), .text("a"), .null])
        #expect(("SELECT " + SQL(raw: "1") + " WHERE \(7) = 7").rendered(for: SQLiteDialect()).text == "SELECT 1 WHERE ? = 7")
    }

    @Test func namesThatNeedQuotesAreQuoted() {
        let dialect = SQLiteDialect()
        #expect(dialect.quoteIfNeeded("ZBOOK") == "ZBOOK")
        #expect(dialect.quoteIfNeeded("z_1tags") == "z_1tags")
        #expect(dialect.quoteIfNeeded("1st") == "\"1st\"")
        #expect(dialect.quoteIfNeeded("Bücher") == "\"Bücher\"")
        #expect(dialect.quoteIfNeeded("a\"b; DROP TABLE x") == "\"a\"\"b; DROP TABLE x\"")
        #expect(dialect.quoteIfNeeded("") == "\"\"")
        let postgres = PostgresDialect()
        #expect(postgres.quoteIfNeeded("zbook") == "zbook")
        #expect(postgres.quoteIfNeeded("ZBOOK") == "\"ZBOOK\"")
        #expect(postgres.quoteIfNeeded("Book") == "\"Book\"")
    }

    /// A round trip through each engine: the values of users' data (cents, non-ASCII, NULL,
    /// a quote, a name that needs quotes) go in bound and come back as they were.
    @Test(arguments: TestBackend.allCases)
    func valuesRoundTripThroughTheEngine(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            let table = "Bücher \"neu\""
            let capitalised = "Regal"
            let rows: [(Int64, String?, Double?)] = [(1, "Ænima — l'été", 19.99), (2, nil, 0.01), (3, "O'Brien; DROP TABLE x", nil)]
            try await database.write { connection in
                try connection.run(
                    "CREATE TABLE \(identifier: table) (k \(raw: connection.dialect.keyColumnType), t \(raw: connection.dialect.columnType(for: .string)), p \(raw: connection.dialect.columnType(for: .double)))"
                )
                for (key, text, price) in rows {
                    try connection.run(
                        "INSERT INTO \(identifier: table) (k, t, p) VALUES (\(key), \(text.map(DatabaseValue.text) ?? .null), \(price.map(DatabaseValue.double) ?? .null))"
                    )
                }
            }
            let read = try await database.read { connection in
                try connection.rows("SELECT k, t, p FROM \(identifier: table) WHERE k >= \(Int64(1)) ORDER BY k").map {
                    ($0[0].int64, $0[1].text, $0[2].double)
                }
            }
            #expect(read.map(\.0) == rows.map { Optional($0.0) })
            #expect(read.map(\.1) == rows.map(\.1))
            #expect(read.map(\.2) == rows.map(\.2))
            let count = try await database.read {
                try $0.scalar("SELECT count(*) FROM \(identifier: table) WHERE t = \("O'Brien; DROP TABLE x")")
            }
            #expect(count?.int64 == 1)
            // A name with capitals is the same table wherever it is named.
            try await database.write { try $0.execute("CREATE TABLE \(identifier: capitalised) (k \(raw: $0.dialect.keyColumnType))") }
            let names = try await database.read { try $0.rows($0.dialect.tableListingQuery).compactMap { $0[0].text } }
            #expect(names.contains(capitalised), "\(names)")
        }
    }

    /// A statement binding more values than the engine takes is refused before it reaches
    /// the engine, with an error that says how many and what to do; at the limit it runs.
    @Test(arguments: TestBackend.allCases)
    func aStatementBeyondTheParameterLimitIsRefusedByName(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            let limit = database.dialect.parameterLimit
            @Sendable func query(_ count: Int) -> SQL {
                "SELECT count(*) FROM \(storeName: "Z_PRIMARYKEY") WHERE \(storeName: "Z_ENT") IN (\(list: (0..<count).map { DatabaseValue.integer(Int64($0)) }))"
            }
            let atLimit = try await database.read { try $0.scalar(query(limit)) }
            #expect(atLimit?.int64 ?? 0 > 0)
            do {
                _ = try await database.read { try $0.scalar(query(limit + 1)) }
                Issue.record("a statement of \(limit + 1) values ran")
            } catch let error as DatabaseError {
                #expect(error.argumentCount == limit + 1)
                #expect(error.message.contains("binds \(limit + 1) values, more than the \(limit)"), "\(error)")
                #expect(error.message.contains("statementChunks"))
            }
        }
    }

    /// A name that is a keyword of SQL (`order`, `group`, `user`) is quoted, so it names a
    /// table or column instead of ending the statement in a syntax error.
    @Test(arguments: TestBackend.allCases)
    func aNameThatIsAKeywordIsQuoted(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            for (table, column) in [("order", "group"), ("user", "limit"), ("select", "from")] {
                try await database.write { connection in
                    try connection.run(
                        "CREATE TABLE \(identifier: table) (\(identifier: column) \(raw: connection.dialect.columnType(for: .string)))"
                    )
                    try connection.run("INSERT INTO \(identifier: table) (\(identifier: column)) VALUES (\("Ærø"))")
                }
                let read = try await database.read { try $0.scalar("SELECT \(identifier: column) FROM \(identifier: table)") }
                #expect(read?.text == "Ærø", "\(table).\(column)")
            }
        }
        #expect(SQLiteDialect().quoteIfNeeded("order") == "\"order\"" && PostgresDialect().quoteIfNeeded("user") == "\"user\"")
        #expect(SQLiteDialect().quoteIfNeeded("ZORDER") == "ZORDER" && PostgresDialect().quoteIfNeeded("zorder") == "zorder")
        // The quoting skips the look-up for names longer than any keyword or starting with Z.
        for keyword in SQLiteDialect.keywords.union(PostgresDialect.keywords) {
            #expect(keyword.utf8.count <= 17 && !keyword.hasPrefix("Z"), "\(keyword)")
        }
    }
}
