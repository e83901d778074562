import PersistenceTesting
import Testing

@testable import Persistence

/// `StoreSnapshot`, which the migration tests hold a refused or failed migration's store to
/// ("unchanged"), sees each kind of change a migration could make to a PostgreSQL schema
/// and leave the rows as they were; on SQLite, each change of the schema's text.
@Suite("store snapshots")
struct StoreSnapshotTests {
    static let setUp = """
        CREATE TABLE zbook (z_pk bigint PRIMARY KEY, ztitle varchar(40), zprice numeric(12,2), zsaved timestamp(3));
        INSERT INTO zbook VALUES (1, 'Ein Buch', 12.50, '2026-01-02 03:04:05.678');
        """

    /// Each change of the PostgreSQL schema, made after a snapshot, is among the differences.
    @Test(arguments: [
        "ALTER TABLE zbook ALTER COLUMN ztitle TYPE varchar(41)",
        "ALTER TABLE zbook ALTER COLUMN zprice TYPE numeric(12,3)",
        "ALTER TABLE zbook ALTER COLUMN zsaved TYPE timestamp(6)",
        "ALTER TABLE zbook ALTER COLUMN ztitle SET DEFAULT 'x'",
        "ALTER TABLE zbook ALTER COLUMN ztitle TYPE varchar(40) COLLATE \"C\"",
        "ALTER TABLE zbook SET UNLOGGED",
        "CREATE VIEW zbooks AS SELECT ztitle FROM zbook",
        "CREATE FUNCTION zcount() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM zbook'",
        "GRANT SELECT ON zbook TO PUBLIC",
        "GRANT CREATE ON SCHEMA {schema} TO PUBLIC",
    ])
    func aChangeOfAPostgreSQLSchemaIsADifference(change: String) async throws {
        try await TestPostgres.withDatabase { url in
            guard case .postgres(let configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            let sql = change.replacingOccurrences(of: "{schema}", with: configuration.quotedSchema)
            try Self.run(Self.setUp, on: configuration)
            let before = try await StoreSnapshot(url)
            try Self.run(sql, on: configuration)
            let after = try await StoreSnapshot(url)
            #expect(!after.differences(from: before).isEmpty, "\(sql) made no difference: \(after)")
            #expect(after != before)
        }
    }

    /// Two snapshots of a store no one changed are alike: the differences above are the
    /// changes', not the snapshot's own.
    @Test func aStoreNoOneChangedIsTheSame() async throws {
        try await TestPostgres.withDatabase { url in
            guard case .postgres(let configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            try Self.run(Self.setUp, on: configuration)
            let before = try await StoreSnapshot(url)
            let after = try await StoreSnapshot(url)
            #expect(after.differences(from: before).isEmpty, "\(after.differences(from: before))")
            #expect(
                after.tables["zbook"]?.first
                    == "z_pk bigint NOT NULL, ztitle character varying(40), zprice numeric(12,2), zsaved timestamp(3) without time zone",
                "\(String(describing: after.tables["zbook"]))"
            )
        }
    }

    /// Runs `sql` in the store's schema, on a session of its own.
    static func run(_ sql: String, on configuration: PostgresConfiguration) throws {
        let connection = try PostgresConnection(configuration: configuration)
        try connection.execute(rawSQL: "SET search_path TO \(configuration.quotedSchema); " + sql)
    }
}
