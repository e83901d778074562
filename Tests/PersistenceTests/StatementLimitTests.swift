import CLibPQ
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Bulk writes within every engine's argument limit, with the oldest client library the
/// framework supports: libpq 15.18 (Debian 12's main archive) drops the session when a
/// statement of more than 7 498 arguments is described, so a batch of 1 000 rows of 8 or
/// more columns must be cut, or go by `COPY`.
@Suite("Statement limits")
struct StatementLimitTests {
    /// A backend, and on PostgreSQL the bulk-insert method forced on the store.
    struct BulkCase: CustomTestStringConvertible, Sendable {
        let backend: TestBackend
        let method: PostgresConfiguration.BulkInsertMethod?

        var testDescription: String { method.map { "\(backend.rawValue), \($0.rawValue)" } ?? backend.rawValue }

        static let all: [BulkCase] =
            [BulkCase(backend: .sqlite, method: nil), BulkCase(backend: .memory, method: nil)]
            + PostgresConfiguration.BulkInsertMethod.allCases.map { BulkCase(backend: .postgres, method: $0) }
    }

    /// One entity of `columns` attributes: three doubles for every float.
    static func wideModel(columns: Int) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            name: "Wide",
            versionIdentifier: "1",
            entities: [
                EntityDescription(
                    name: "Wide",
                    attributes: (0..<columns).map { index in
                        AttributeDescription(name: "v\(index)", type: index % 4 == 3 ? .float : .double)
                    }
                )
            ]
        )
    }

    /// Doubles of every precision, the same for a given row and column: shortest texts of
    /// 1 to 17 digits, cents, subnormals, the extremes, −0, infinities, and random bits.
    static func double(row: Int, column: Int) -> Double {
        var generator = PredicateFuzzTests.Generator(state: UInt64(row) &* 1_000_003 &+ UInt64(column))
        switch (row + column) % 12 {
        case 0: return Double(row) / 100 + Double(column)  // prices with cents
        case 1: return 0.1 * Double(row) + 1e-300
        case 2: return Double.leastNonzeroMagnitude * Double(row % 1000 + 1)
        case 3: return row % 2 == 0 ? .greatestFiniteMagnitude : -.leastNormalMagnitude
        case 4: return row % 3 == 0 ? -0.0 : (row % 3 == 1 ? .infinity : -.infinity)
        case 5: return 1.0 / Double(row + 3)
        default:
            var value = Double.nan
            while !value.isFinite { value = Double(bitPattern: generator.next()) }
            return value
        }
    }

    /// Floats of every precision, as a Float attribute holds them.
    static func float(row: Int, column: Int) -> Float {
        var generator = PredicateFuzzTests.Generator(state: UInt64(row) &* 7_919 &+ UInt64(column))
        switch (row + column) % 6 {
        case 0: return Float(row) / 100
        case 1: return Float.leastNonzeroMagnitude * Float(row % 100 + 1)
        case 2: return row % 2 == 0 ? .greatestFiniteMagnitude : -.infinity
        default:
            var value = Float.nan
            while !value.isFinite { value = Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())) }
            return value
        }
    }

    @Test(arguments: BulkCase.all, [8, 64, 200])
    func aThousandRowsOfDoublesComeBackExactly(bulk: BulkCase, columns: Int) async throws {
        let model = try Self.wideModel(columns: columns)
        try await bulk.backend.withStoreURL(fileName: "store.sqlite") { url in
            var storeURL = url
            if case .postgres(var configuration) = url.kind, let method = bulk.method {
                configuration.bulkInsert = method
                storeURL = .postgres(configuration)
            }
            let container = try await PersistentContainer.open(model: model, store: storeURL, options: .createIfMissing, logger: testLogger)
            do {
                let schema = container.store.schema
                let table = try #require(schema.table(for: "Wide"))
                let attributes = container.store.model.attributes(of: try #require(model.entity(named: "Wide")))
                let names = ["Z_PK", "Z_ENT", "Z_OPT"].map(schema.dialect.name) + attributes.compactMap { table.column(for: $0.name)?.name }
                #expect(names.count == columns + 3)
                let rowCount = 1_000
                let rows: [[DatabaseValue]] = (0..<rowCount).map { row in
                    [.integer(Int64(row + 1)), .integer(Int64(table.entityNumber)), .integer(1)]
                        + (0..<columns).map { column in
                            column % 4 == 3 ? .double(Double(Self.float(row: row, column: column))) : .double(Self.double(row: row, column: column))
                        }
                }
                let prepared = try await container.store.database.write { [rows] connection -> [Int] in
                    try connection.insertRows(into: table.name, columns: names, rows: rows)
                    guard connection.dialect is PostgresDialect else { return [] }
                    // The multi-row INSERTs this session prepared, by their number of arguments.
                    return try connection.rows(
                        rawSQL: "SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE statement LIKE $1",
                        [.text("INSERT INTO \(table.name) %")]
                    )
                    .compactMap { $0[0].int64.map(Int.init) }
                }
                if bulk.backend == .postgres {
                    #expect(prepared.allSatisfy { $0 <= PostgresDialect().parameterLimit }, "statements of \(prepared) arguments")
                    switch bulk.method {
                    case .parameters?: #expect(!prepared.isEmpty, "the rows went by bound arguments")
                    default: #expect(prepared.isEmpty, "a batch of \(rowCount) rows goes by COPY, not by \(prepared.count) INSERTs")
                    }
                }
                let columnList = names.joined(separator: ", ")
                let stored = try await container.store.database.read { connection in
                    try connection.rows(rawSQL: "SELECT \(columnList) FROM \(table.name) ORDER BY \(names[0])")
                }
                #expect(stored.count == rowCount)
                var mismatches = 0
                for (row, values) in stored.enumerated() {
                    for column in 0..<columns {
                        let expected = column % 4 == 3 ? Double(Self.float(row: row, column: column)) : Self.double(row: row, column: column)
                        let value = values[column + 3].double
                        // Exactly; SQLite keeps −0 as 0, as Core Data's stores do.
                        if value != expected, mismatches < 10 {
                            mismatches += 1
                            Issue.record("row \(row + 1), v\(column): \(String(describing: value)) instead of \(expected)")
                        }
                    }
                }
            } catch {
                await container.store.close()
                throw error
            }
            await container.store.close()
        }
    }

    @Test func statementsAreCutToTheEngineLimit() {
        for dialect in [SQLiteDialect(), PostgresDialect()] as [any SQLDialect] {
            for columns in [1, 3, 8, 64, 200, 1_600] {
                let rows = dialect.rowsPerStatement(argumentsPerRow: columns)
                #expect(rows >= 1 && rows <= 1_000)
                #expect(rows * columns <= dialect.parameterLimit || rows == 1, "\(dialect.engineName), \(columns) columns: \(rows) rows")
            }
            let chunks = dialect.statementChunks(Array(0..<10_001), argumentsPerItem: 8, reserved: 2)
            #expect(chunks.map(\.count).reduce(0, +) == 10_001)
            #expect(chunks.allSatisfy { $0.count * 8 + 2 <= dialect.parameterLimit })
            #expect(Array(chunks.joined()) == Array(0..<10_001))
        }
        #expect(PostgresDialect().statementChunks([Int](), argumentsPerItem: 3).isEmpty)
    }

    /// The largest statement the limit allows is described and run with the oldest libpq
    /// supported. One argument more is what libpq 15.18 cannot take: its failure is said as
    /// libpq's own, with its version, not as the server going away.
    @Test func aStatementAtTheArgumentLimitRuns() async throws {
        let limit = PostgresDialect().parameterLimit
        try await TestPostgres.withDatabase { url in
            guard case .postgres(let configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            func sum(_ count: Int) throws -> Int64? {
                let connection = try PostgresConnection(configuration: configuration)
                defer { connection.close() }
                let sql = "SELECT sum(v)::bigint FROM unnest(ARRAY[" + (1...count).map { "$\($0)::bigint" }.joined(separator: ", ") + "]) AS v"
                return try connection.scalar(rawSQL: sql, (1...count).map { DatabaseValue.integer(Int64($0)) })?.int64
            }
            #expect(try sum(limit) == Int64(limit * (limit + 1) / 2))
            do {
                let total = try sum(limit + 1)
                #expect(total == Int64((limit + 1) * (limit + 2) / 2))
                // Later libpq releases take longer descriptions; the floor does not.
                #expect(PQlibVersion() > 150_018, "\(PostgresConnection.libraryVersion) described \(limit + 1) arguments")
            } catch let error as DatabaseError {
                #expect(error.clientLibrary == PostgresConnection.libraryVersion, "\(error)")
                #expect(StorageFault(error) == .clientLibrary(PostgresConnection.libraryVersion))
                #expect(error.description.count < 800, "\(error.description.count) characters")
            }
        }
    }

    /// A failure libpq raises itself is said as the client library's, with its version,
    /// and a statement of thousands of arguments is quoted by its start and size.
    @Test func aClientLibraryFailureIsNotTheServerGoingDown() throws {
        let sql = "INSERT INTO zbook (z_pk) VALUES " + (1...8_000).map { "($\($0))" }.joined(separator: ", ")
        let error = PostgresConnection.clientError(
            "lost synchronization with server: got message type \"t\", length 32006",
            sessionLost: true,
            sql: sql,
            argumentCount: 8_000
        )
        #expect(error.sqlState == nil)
        #expect(error.clientLibrary == PostgresConnection.libraryVersion)
        #expect(PostgresConnection.libraryVersion.hasPrefix("libpq 1"))
        #expect(StorageFault(error) == .clientLibrary(PostgresConnection.libraryVersion))
        let text = error.description
        #expect(text.count < 600, "\(text.count) characters")
        #expect(text.contains("raised by libpq"))
        #expect(text.contains("more characters, 8000 parameters"))
        #expect(!"\(StorageFault(error)!)".contains("shutting down"))
        // The server going away stays class 08.
        let lost = PostgresConnection.clientError("server closed the connection unexpectedly", sessionLost: true, sql: "SELECT 1")
        #expect(lost.sqlState == "08006")
        #expect(StorageFault(lost) == .serverUnavailable)
    }
}
