import PersistenceTesting
import Testing

@testable import Persistence

/// A migration step's SQL names its source tables and key offsets symbolically, and the
/// step resolves them when it runs.
@Suite struct MigrationSQLTests {
    @Test func sourceTablesAndKeyOffsetsAreResolvedWhenTheStepRuns() {
        let name = "offset(x)"
        let join: SQL = "SELECT b.Z_PK + \(offsetOf: "BookToBook") FROM \(sourceTable: "ZBOOK") b"
        let sql: SQL = "INSERT INTO ZBOOK (Z_PK) \(join) WHERE b.Z_ENT = \(3) AND b.ZNAME = \(name)"
        let resolved = sql.resolved(sourceSchema: "src", offsets: ["BookToBook": 40]).rendered(for: .sqlite)
        #expect(resolved.text == "INSERT INTO ZBOOK (Z_PK) SELECT b.Z_PK + 40 FROM src.ZBOOK b WHERE b.Z_ENT = ? AND b.ZNAME = ?")
        #expect(resolved.arguments == [.integer(3), .text("offset(x)")])
        // A mapping without an offset starts at zero; the schema comes as the engine quotes it,
        // the table is quoted as the dialect quotes a name.
        let quoted = sql.resolved(sourceSchema: "\"store\"", offsets: [:]).rendered(for: .postgres)
        #expect(quoted.text == "INSERT INTO ZBOOK (Z_PK) SELECT b.Z_PK + 0 FROM \"store\".\"ZBOOK\" b WHERE b.Z_ENT = $1 AND b.ZNAME = $2")
    }

    @Test func joinedPiecesKeepTheirParts() {
        let values: [SQL] = ["s.Z_PK + \(offsetOf: "A")", "\(Int64(1))", "(SELECT 2 FROM \(sourceTable: "ZB"))"]
        let resolved = values.joined(separator: ", ").resolved(sourceSchema: "src", offsets: ["A": 7]).rendered(for: .sqlite)
        #expect(resolved.text == "s.Z_PK + 7, ?, (SELECT 2 FROM src.ZB)")
        #expect(resolved.arguments == [.integer(1)])
    }

    @Test func withoutASourceSchemaTheTableIsTheStoreOwn() {
        let sql: SQL = "SELECT 1 FROM \(sourceTable: "zbook")"
        #expect(sql.resolved(sourceSchema: nil, offsets: [:]).rendered(for: .postgres).text == "SELECT 1 FROM zbook")
    }

    /// Run before it is resolved, a step's statement names what exists nowhere, so the
    /// engine refuses it instead of reading the destination's own table.
    @Test(arguments: TestBackend.allCases)
    func anUnresolvedStatementIsRefusedByTheEngine(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let database = container.store.database
            let unresolved: SQL = "SELECT count(*) FROM \(sourceTable: database.dialect.name("Z_PRIMARYKEY"))"
            await #expect(throws: DatabaseError.self) { _ = try await database.read { try $0.scalar(unresolved) } }
            let offset: SQL = "SELECT 1 + \(offsetOf: "BookToBook")"
            await #expect(throws: DatabaseError.self) { _ = try await database.read { try $0.scalar(offset) } }
            let resolved = try await database.read { try $0.scalar(unresolved.resolved(sourceSchema: nil, offsets: [:])) }
            #expect(resolved?.int64 ?? 0 > 0)
        }
    }
}
