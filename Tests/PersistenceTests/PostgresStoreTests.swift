import Dispatch
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// What is PostgreSQL's own: connecting and failing to, schemas, the wire types, errors.
@Suite("PostgreSQL stores")
struct PostgresStoreTests {
    /// A configuration for the test server, but for what `change` alters.
    func configuration(_ change: (inout PostgresConfiguration) -> Void) async throws -> PostgresConfiguration {
        let database = try await TestPostgres.makeDatabase()
        try await database.drop()
        var configuration = database.configuration
        change(&configuration)
        return configuration
    }

    /// A port on 127.0.0.1 that nothing listens on.
    func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Connecting

    @Test func wrongPortFailsQuicklyNamingTheServer() async throws {
        let port = try closedPort()
        // A connect_timeout of ten minutes: failing within one proves it was not waited out.
        let url = try StoreURL("postgres://bookstore:s3cret-pw@127.0.0.1:\(port)/bookstore?connect_timeout=600")
        // Timed on a thread of its own: libpq's time, not the time a busy test run takes to resume the test.
        guard case .postgres(let configuration) = url.kind else {
            Issue.record("not a PostgreSQL store: \(url.kind)")
            return
        }
        let connecting: Duration = await withCheckedContinuation { continuation in
            DispatchQueue(label: "tests.postgres.connect").async {
                let started = ContinuousClock.now
                _ = try? PostgresConnection(configuration: configuration)
                continuation.resume(returning: ContinuousClock.now - started)
            }
        }
        #expect(connecting < .seconds(60), "a refused connection fails at once, not after connect_timeout (600 s): it took \(connecting)")
        let error = await #expect(throws: StoreError.self) {
            try await PersistentStore.open(url, model: try LibraryModel.make(), options: .createIfMissing, logger: testLogger)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(error?.code == .connectionFailed)
        #expect(text.contains("127.0.0.1:\(port)"), "\(text)")
        #expect(text.contains("database 'bookstore'") && text.contains("user 'bookstore'"), "\(text)")
        #expect(text.lowercased().contains("refused"), "libpq's reason: \(text)")
        #expect(!text.contains("s3cret-pw"), "the password never appears: \(text)")
    }

    @Test func wrongDatabaseNameIsNamed() async throws {
        let configuration = try await configuration {
            $0.database = "no_such_bookstore"
            $0.password = "s3cret-pw"
        }
        let error = await #expect(throws: StoreError.self) {
            try await PersistentStore.open(.postgres(configuration), model: try LibraryModel.make(), options: .createIfMissing, logger: testLogger)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(error?.code == .connectionFailed)
        #expect(text.contains("no_such_bookstore") && text.contains("does not exist"), "\(text)")
        #expect(text.contains(configuration.serverDescription), "\(text)")
        #expect(!text.contains("s3cret-pw"), "\(text)")
        #expect(error?.hint != nil)
    }

    @Test func withoutAServerTheTestsSayHowToGetOne() {
        let text = "\(TestPostgresError("initdb and pg_ctl are not installed"))"
        #expect(text.contains("initdb and pg_ctl are not installed."))
        #expect(text.contains("apt-get install postgresql") && text.contains("BOOKSTORE_TEST_POSTGRES_URL"))
    }

    // MARK: Stores

    @Test func storesInSchemasOfTheirOwn() async throws {
        try await TestPostgres.withDatabase { url in
            guard case .postgres(var shop) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            shop.schema = "Shop Floor"
            let model = try LibraryModel.make()
            let created = try await PersistentStore.open(.postgres(shop), model: model, options: .createIfMissing, logger: testLogger)
            let context = ManagedObjectContext(store: created, logger: testLogger)
            try context.insertObject(entityName: "Book").setValue("In the schema", forKey: "title")
            try await context.save()
            await created.close()

            // The public schema holds nothing; the store is whole in its own schema.
            let metadata = try await PersistentStore.metadata(at: .postgres(shop))
            #expect(metadata.storeUUID == created.metadata.storeUUID)
            #expect(metadata.storeType == "PostgreSQL")
            await #expect(throws: StoreError.self) { try await PersistentStore.metadata(at: url) }
            let reopened = try await PersistentStore.open(.postgres(shop), model: model, logger: testLogger)
            let books = try await ManagedObjectContext(store: reopened, logger: testLogger).fetch(FetchRequest(entityName: "Book"))
            #expect(books.map { $0.value(forKey: "title") } == ["In the schema"])
            let schemas = try await reopened.database.read {
                try $0.rows("SELECT table_schema, count(*) FROM information_schema.tables WHERE table_name LIKE 'z%' GROUP BY table_schema")
            }
            #expect(schemas.map(\.values) == [[.text("Shop Floor"), .integer(11)]])
            await reopened.close()
        }
    }

    // MARK: The wire

    /// A `real` reads back as the same double whether its statement's results come in
    /// binary (every column binary-readable) or in text (a `numeric` beside it; every
    /// statement's first run behind a pooler in transaction mode): "12.3" is the float
    /// 12.3, not the double. A keyset page's cursor compares the value it read.
    @Test(arguments: [12.3, 0.1, 1e-7, 3.4028234e38, -2.5])
    func aRealReadsTheSameInTextAsInBinary(value: Double) async throws {
        let database = try await TestPostgres.makeDatabase()
        defer { Task { try? await database.drop() } }
        let connection = try PostgresConnection(configuration: database.configuration)
        let binary = try connection.scalar(rawSQL: "SELECT $1::real", [.double(value)])
        let text = try connection.rows(rawSQL: "SELECT $1::real, DATE '2026-11-29'", [.double(value)]).first?[0]
        #expect(binary == .double(Double(Float(value))))
        #expect(text == binary)
    }

    /// Runs `body` on a connection to a fresh database.
    func withConnection(_ body: @escaping @Sendable (any DatabaseConnection) throws -> Void) async throws {
        try await TestPostgres.withDatabase { url in
            guard case .postgres(let configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            let database = try await PostgresDatabase.open(configuration, readerCount: 0)
            do {
                try await database.writeWithoutTransaction(body)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }

    @Test func valuesComeBackByType() async throws {
        try await withConnection { connection in
            let row = try #require(
                try connection.rows(
                    """
                    SELECT 7::smallint, 2147483647::integer, '-9223372036854775808'::bigint, 1.5::real, 0.1::double precision,
                           123456789012345678901234567890.000000000000000000000000000001::numeric, 'x'::varchar, 'y'::text,
                           '\\x00ff'::bytea, ''::bytea, true, false, '00112233-4455-6677-8899-aabbccddeeff'::uuid,
                           '1969-12-31 23:59:59.999999+00'::timestamptz, '0.0001'::numeric, '-10000'::numeric, 0::numeric
                    """
                ).first
            )
            #expect(
                row.values == [
                    .integer(7), .integer(2_147_483_647), .integer(Int64.min), .double(1.5), .double(0.1),
                    .text("123456789012345678901234567890.000000000000000000000000000001"), .text("x"), .text("y"),
                    .blob(Data([0x00, 0xFF])), .blob(Data()), .integer(1), .integer(0), .text("00112233-4455-6677-8899-aabbccddeeff"),
                    .double(-978_307_200.000_001), .text("0.0001"), .text("-10000"), .text("0"),
                ]
            )
            // A column without a binary reader (date) makes the whole row text; the values are the same.
            let text = try #require(
                try connection.rows(
                    "SELECT '2001-01-01'::date, 42::integer, true, '\\x01'::bytea, 2.5::numeric, '2001-01-01 00:00:01.5+00'::timestamptz"
                ).first
            )
            #expect(text.values == [.text("2001-01-01"), .integer(42), .integer(1), .blob(Data([1])), .text("2.5"), .double(1.5)])
        }
    }

    @Test func argumentsBindByKind() async throws {
        try await withConnection { connection in
            try connection.execute("CREATE TABLE t (i smallint, b boolean, u uuid, d timestamptz, n numeric, x bytea, f real)")
            try connection.run(
                rawSQL: "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [
                    .integer(-3), .text("true"), .text("00112233-4455-6677-8899-aabbccddeeff"),
                    .text(PostgresTimestamp.text(secondsSinceReferenceDate: -0.5)), .text("1.000000000000000000001"), .blob(Data()), .double(0.25),
                ]
            )
            try connection.run(rawSQL: "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)", Array(repeating: .null, count: 7))
            let rows = try connection.rows("SELECT i, b, u, d, n, x, f FROM t ORDER BY i NULLS LAST")
            #expect(
                rows.map(\.values) == [
                    [
                        .integer(-3), .integer(1), .text("00112233-4455-6677-8899-aabbccddeeff"), .double(-0.5), .text("1.000000000000000000001"),
                        .blob(Data()), .double(0.25),
                    ],
                    Array(repeating: .null, count: 7),
                ]
            )
            // One SQL, arguments of other kinds: prepared again for the new types.
            #expect(try connection.scalar(rawSQL: "SELECT count(*) FROM t WHERE i = $1", [.integer(-3)]) == .integer(1))
            #expect(try connection.scalar(rawSQL: "SELECT count(*) FROM t WHERE i = $1", [.text("-3")]) == .integer(1))
            #expect(try connection.scalar(rawSQL: "SELECT count(*) FROM t WHERE i = $1", [.double(-3)]) == .integer(1))
        }
    }

    @Test func errorsCarrySQLStateAndSQLButNeverValues() async throws {
        try await withConnection { connection in
            try connection.execute("CREATE TABLE t (u uuid PRIMARY KEY)")
            let bad = #expect(throws: DatabaseError.self) {
                try connection.run(rawSQL: "INSERT INTO t VALUES ($1)", [.text("not-a-secret-uuid")])
            }
            #expect(bad?.sqlState == "22P02")
            #expect(bad?.sql == "INSERT INTO t VALUES ($1)")
            #expect(bad.map { !"\($0)".contains("not-a-secret-uuid") } == true, "\(String(describing: bad))")
            let missing = #expect(throws: DatabaseError.self) { try connection.run(rawSQL: "SELECT * FROM no_such_table", []) }
            #expect(missing?.sqlState == "42P01")
            #expect(missing?.message.contains("no_such_table") == true)
            let arity = #expect(throws: DatabaseError.self) { try connection.run(rawSQL: "SELECT $1::int", []) }
            #expect(arity?.message.contains("takes 1 arguments, got 0") == true)
        }
    }

    @Test func statementsPreparedBeforeATableChangesArePreparedAgain() async throws {
        try await withConnection { connection in
            try connection.execute("CREATE TABLE t (a integer)")
            try connection.run(rawSQL: "INSERT INTO t VALUES ($1)", [.integer(1)])
            #expect(try connection.rows("SELECT * FROM t").map(\.values) == [[.integer(1)]])
            try connection.execute("ALTER TABLE t ADD COLUMN b text DEFAULT 'new'")
            #expect(try connection.rows("SELECT * FROM t").map(\.values) == [[.integer(1), .text("new")]])
        }
    }

    @Test func sessionsRunInUTCWithISODates() async throws {
        try await withConnection { connection in
            let row = try #require(
                try connection.rows("SELECT current_setting('TimeZone'), current_setting('DateStyle'), current_setting('client_min_messages')").first
            )
            #expect(row.values == [.text("UTC"), .text("ISO, MDY"), .text("warning")])
        }
    }

    @Test func timestampsRoundTripToTheMicrosecond() {
        for seconds in [0, 0.5, -0.000_001, 734_567_890.123_456, -978_307_200.5, -63_113_904_000, 12_345.678_9] {
            let text = PostgresTimestamp.text(secondsSinceReferenceDate: seconds)
            #expect(PostgresTimestamp.secondsSinceReferenceDate(text: text) == seconds, "\(seconds) → \(text)")
        }
        #expect(PostgresTimestamp.text(secondsSinceReferenceDate: 0) == "2001-01-01 00:00:00.000000+00")
        #expect(PostgresTimestamp.secondsSinceReferenceDate(text: "2001-01-01 05:30:00+05:30") == 0)
        #expect(PostgresTimestamp.text(secondsSinceReferenceDate: -63_113_990_400) == "0001-12-31 00:00:00.000000+00 BC")
    }
}
