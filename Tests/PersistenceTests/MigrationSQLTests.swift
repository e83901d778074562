import Testing
@testable import Persistence

@Suite struct MigrationSQLTests {
    @Test func sourceTablesAndKeyOffsetsAreResolvedWhenTheStepRuns() {
        let join: MigrationSQL = "SELECT b.Z_PK + \(offsetOf: "BookToBook") FROM \(sourceTable: "ZBOOK") b"
        let sql: MigrationSQL = "INSERT INTO ZBOOK (Z_PK) \(join) WHERE b.Z_ENT = \(3) AND b.ZNAME = 'offset(x)'"
        #expect(sql.resolved(sourceSchema: "src", offsets: ["BookToBook": 40]) == "INSERT INTO ZBOOK (Z_PK) SELECT b.Z_PK + 40 FROM src.ZBOOK b WHERE b.Z_ENT = 3 AND b.ZNAME = 'offset(x)'")
        // A mapping without an offset starts at zero; text that looks like a marker stays text.
        #expect(sql.resolved(sourceSchema: "\"store\"", offsets: [:]) == "INSERT INTO ZBOOK (Z_PK) SELECT b.Z_PK + 0 FROM \"store\".ZBOOK b WHERE b.Z_ENT = 3 AND b.ZNAME = 'offset(x)'")
    }

    @Test func joinedPiecesKeepTheirParts() {
        let values: [MigrationSQL] = ["s.Z_PK + \(offsetOf: "A")", "1", "(SELECT 2 FROM \(sourceTable: "ZB"))"]
        #expect(MigrationSQL.joined(values, separator: ", ").resolved(sourceSchema: "src", offsets: ["A": 7]) == "s.Z_PK + 7, 1, (SELECT 2 FROM src.ZB)")
    }
}
