import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The change capture of online migrations. PostgreSQL only: it records other sessions'
/// writes with triggers while the previous release keeps writing, which SQLite's single
/// writer does not allow (a SQLite store is protected from other writers instead).
@Suite("PostgreSQL change capture")
struct PostgresChangeCaptureTests {
    static let tables = [
        PostgresChangeCapture.Table(name: "zpublication", keyColumns: ["z_pk"]),
        PostgresChangeCapture.Table(name: "z_1authors", keyColumns: ["z_1publications", "z_2authors"]),
    ]

    /// A store-like schema `bookstore` with a publication table and a join table, and two
    /// sessions on it: the migration's and another writer's.
    func withStore(
        _ body: (_ migration: PostgresDatabase, _ writer: PostgresDatabase, _ configuration: PostgresConfiguration) async throws -> Void
    ) async throws {
        try await TestPostgres.withDatabase { url in
            guard case .postgres(var configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url)")
                return
            }
            configuration.schema = "bookstore"
            let migration = try await PostgresDatabase.open(configuration, readerCount: 0)
            let writer: PostgresDatabase
            do {
                try await migration.writeWithoutTransaction { connection in
                    try connection.execute(
                        """
                        CREATE SCHEMA bookstore;
                        CREATE TABLE bookstore.zpublication (z_pk bigint PRIMARY KEY, z_opt integer, ztitle text, zprice double precision);
                        CREATE TABLE bookstore.z_1authors (z_1publications bigint NOT NULL, z_2authors bigint NOT NULL, PRIMARY KEY (z_1publications, z_2authors))
                        """
                    )
                }
                writer = try await PostgresDatabase.open(configuration, readerCount: 0)
            } catch {
                await migration.close()
                throw error
            }
            do {
                try await body(migration, writer, configuration)
            } catch {
                await writer.close()
                await migration.close()
                throw error
            }
            await writer.close()
            await migration.close()
        }
    }

    static func install(on database: PostgresDatabase) async throws -> PostgresChangeCapture {
        try await database.write { try PostgresChangeCapture.install(tables: tables, storeSchema: "bookstore", on: $0) }
    }

    @Test func everyCommittedChangeIsRecordedInOrderAndClaimedOnce() async throws {
        try await withStore { migration, writer, _ in
            let capture = try await Self.install(on: migration)
            _ = try await writer.write { connection in
                try connection.run(
                    rawSQL:
                        "INSERT INTO bookstore.zpublication VALUES (1, 1, 'Smilla''s Sense of Snow', 12.99), (2, 1, 'Frøken Smillas fornemmelse for sne', NULL)",
                    []
                )
            }
            _ = try await writer.write {
                try $0.run(rawSQL: "UPDATE bookstore.zpublication SET ztitle = 'Smilla — Ausgabe 2', z_opt = 2 WHERE z_pk = 1", [])
            }
            _ = try await writer.write { try $0.run(rawSQL: "DELETE FROM bookstore.zpublication WHERE z_pk = 2", []) }
            _ = try await writer.write { try $0.run(rawSQL: "INSERT INTO bookstore.z_1authors VALUES (1, 7)", []) }
            _ = try await writer.write { try $0.run(rawSQL: "DELETE FROM bookstore.z_1authors WHERE z_1publications = 1", []) }
            // Rolled back: never recorded.
            let rolledBack = await Self.fails {
                try await writer.write { connection -> Void in
                    try connection.run(rawSQL: "INSERT INTO bookstore.zpublication VALUES (3, 1, 'never', 1.0)", [])
                    throw PostgresChangeCaptureError("the writer gives up")
                }
            }
            #expect(rolledBack)
            // A key that changes is the old row gone and the new one written.
            _ = try await writer.write { try $0.run(rawSQL: "UPDATE bookstore.zpublication SET z_pk = 4 WHERE z_pk = 1", []) }

            let pending = try await migration.write { try capture.pendingCount(on: $0) }
            #expect(pending == 8)
            let changes = try await migration.write { try capture.claim(limit: 100, on: $0) }
            #expect(
                changes.map { "\($0.kind.rawValue) \($0.table) \($0.keys.map(String.init).joined(separator: ","))" } == [
                    "I zpublication 1", "I zpublication 2", "U zpublication 1", "D zpublication 2",
                    "I z_1authors 1,7", "D z_1authors 1,7", "D zpublication 1", "U zpublication 4",
                ]
            )
            #expect(try await migration.write { try capture.claim(limit: 100, on: $0) }.isEmpty, "each change is claimed once")
        }
    }

    @Test func aClaimRolledBackLeavesItsChangesForTheNext() async throws {
        try await withStore { migration, writer, _ in
            let capture = try await Self.install(on: migration)
            for key in 1...5 {
                _ = try await writer.write {
                    try $0.run(rawSQL: "INSERT INTO bookstore.zpublication (z_pk, ztitle) VALUES ($1, 'Ω')", [.integer(Int64(key))])
                }
            }
            let claimed = await Self.fails {
                try await migration.write { connection -> Void in
                    #expect(try capture.claim(limit: 3, on: connection).map(\.keys) == [[1], [2], [3]])
                    throw PostgresChangeCaptureError("the catch-up failed")
                }
            }
            #expect(claimed, "the claim's transaction rolled back")
            #expect(try await migration.write { try capture.pendingCount(on: $0) } == 5)
            #expect(try await migration.write { try capture.claim(limit: 3, on: $0) }.map(\.keys) == [[1], [2], [3]])
            #expect(try await migration.write { try capture.claim(limit: 3, on: $0) }.map(\.keys) == [[4], [5]])
        }
    }

    /// The previous release may connect as a role of its own, with no right to the capture
    /// schema: its writes are recorded all the same, and go through.
    @Test func anotherRolesWritesAreRecorded() async throws {
        try await withStore { migration, _, configuration in
            let capture = try await Self.install(on: migration)
            let role = "bookstore_writer_\(UUID().uuidString.prefix(8).lowercased())"
            try await migration.writeWithoutTransaction { connection in
                try connection.execute(
                    rawSQL: """
                        CREATE ROLE \(role) LOGIN;
                        GRANT USAGE ON SCHEMA bookstore TO \(role);
                        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA bookstore TO \(role)
                        """
                )
            }
            var other = configuration
            other.user = role
            do {
                let writer = try await PostgresDatabase.open(other, readerCount: 0)
                do {
                    _ = try await writer.write { try $0.run(rawSQL: "INSERT INTO bookstore.zpublication (z_pk, ztitle) VALUES (9, 'Čapek')", []) }
                    // Refused for want of the right (42501), not for any other failure.
                    let refusal = await Self.error { _ = try await writer.write { try capture.pendingCount(on: $0) } }
                    #expect(
                        (refusal as? DatabaseError)?.sqlState == "42501",
                        "the role cannot read the capture itself: \(String(describing: refusal))"
                    )
                } catch {
                    await writer.close()
                    throw error
                }
                await writer.close()
                #expect(try await migration.write { try capture.claim(limit: 10, on: $0) }.map(\.keys) == [[9]])
            } catch {
                try? await migration.writeWithoutTransaction { try $0.execute(rawSQL: "DROP OWNED BY \(role); DROP ROLE \(role)") }
                throw error
            }
            try await migration.writeWithoutTransaction { try $0.execute(rawSQL: "DROP OWNED BY \(role); DROP ROLE \(role)") }
        }
    }

    @Test func removingTheCaptureLeavesNoTriggerFunctionOrSchema() async throws {
        try await withStore { migration, writer, _ in
            let capture = try await Self.install(on: migration)
            #expect(try await Self.triggers(on: migration) == 2)
            try await migration.write { try capture.remove(on: $0) }
            #expect(try await Self.triggers(on: migration) == 0)
            #expect(try await Self.captureSchemas(on: migration).isEmpty)
            // The store's tables are written as before.
            _ = try await writer.write { try $0.run(rawSQL: "INSERT INTO bookstore.zpublication (z_pk, ztitle) VALUES (1, 'after')", []) }
        }
    }

    /// What killed runs left is found by its name beside the store and dropped, triggers
    /// and all; another store's capture is not touched.
    @Test func capturesOfKilledRunsAreRemoved() async throws {
        try await withStore { migration, writer, _ in
            let first = try await Self.install(on: migration)
            let second = try await Self.install(on: migration)
            try await migration.writeWithoutTransaction { connection in
                try connection.execute(
                    """
                    CREATE SCHEMA bookstore2; CREATE TABLE bookstore2.zpublication (z_pk bigint PRIMARY KEY);
                    CREATE SCHEMA bookstore_capturing_archive; CREATE TABLE bookstore_capturing_archive.kept (id bigint)
                    """
                )
            }
            let neighbour = try await migration.write {
                try PostgresChangeCapture.install(tables: [.init(name: "zpublication", keyColumns: ["z_pk"])], storeSchema: "bookstore2", on: $0)
            }
            #expect(try await Self.triggers(on: migration) == 5)
            let removed = try await migration.write { try PostgresChangeCapture.removeAbandoned(beside: "bookstore", on: $0) }
            #expect(Set(removed) == [first.captureSchema, second.captureSchema])
            #expect(try await Self.triggers(on: migration) == 1)
            #expect(
                try await Self.captureSchemas(on: migration) == ["bookstore_capturing_archive", neighbour.captureSchema].sorted(),
                "a schema of the user's named alike, and another store's capture, are kept"
            )
            _ = try await writer.write { try $0.run(rawSQL: "INSERT INTO bookstore.zpublication (z_pk) VALUES (1)", []) }
        }
    }

    /// A write in flight keeps its table's trigger from being made: the install gives up
    /// within its lock timeout, leaving nothing, and succeeds once the write has committed,
    /// which the bulk copy then reads.
    @Test func aWriteInFlightHoldsTheInstallOffForItsLockTimeoutOnly() async throws {
        try await withStore { migration, writer, _ in
            try await writer.writeWithoutTransaction {
                try $0.execute("BEGIN; INSERT INTO bookstore.zpublication (z_pk, ztitle) VALUES (1, 'in flight')")
            }
            let started = ContinuousClock.now
            let refusal = await Self.error {
                _ = try await migration.write {
                    try PostgresChangeCapture.install(tables: Self.tables, storeSchema: "bookstore", lockTimeout: .milliseconds(300), on: $0)
                }
            }
            #expect((refusal as? DatabaseError)?.sqlState == "55P03", "lock_not_available: \(String(describing: refusal))")
            // Far from the write's commit, which comes only after; not the 300 ms itself: a
            // full test run's load made the install's few statements take 5.5 s once.
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(try await Self.captureSchemas(on: migration).isEmpty, "the refused install left nothing")
            try await writer.writeWithoutTransaction { try $0.execute("COMMIT") }
            let capture = try await Self.install(on: migration)
            #expect(try await Self.triggers(on: migration) == 2)
            _ = try await writer.write { try $0.run(rawSQL: "UPDATE bookstore.zpublication SET ztitle = 'after the install' WHERE z_pk = 1", []) }
            let changes = try await migration.write { try capture.claim(limit: 10, on: $0) }
            #expect(changes.map(\.kind) == [.update])
            // The lock timeout was the install's only: the transaction's own is as it was.
            let timeout = try await migration.write { connection in
                try connection.execute("SET LOCAL lock_timeout = '7s'")
                _ = try PostgresChangeCapture.install(tables: Self.tables, storeSchema: "bookstore", on: connection)
                return try connection.scalar("SELECT current_setting('lock_timeout')")?.text
            }
            #expect(timeout == "7s")
        }
    }

    /// A writer caught between two tables (it holds the join table and waits for the table
    /// whose trigger the install has just made, while the install waits for the join table)
    /// goes on: the install's lock timeout, kept under the server's deadlock check, ends the
    /// wait first, even when a longer one is asked for. With the timeout past the check, the
    /// server ended the writer's transaction (`deadlock_detected`), a write lost.
    ///
    /// The writer's own deadlock check comes after 20 s rather than the server's 1 s, so that
    /// a loaded machine's slow statements before the install's wait do not reach it; the
    /// install's timeout still comes from its own session's (the server's) setting, and an
    /// install that waited past that would be ended by its own check instead (not 55P03).
    @Test func aWriterCaughtBetweenTwoTablesGoesOnAndTheInstallGivesWay() async throws {
        try await withStore { migration, writer, configuration in
            try await migration.writeWithoutTransaction { try $0.execute("BEGIN; LOCK bookstore.zpublication IN SHARE ROW EXCLUSIVE MODE") }
            try await writer.writeWithoutTransaction {
                try $0.execute("SET deadlock_timeout = '20s'; BEGIN; INSERT INTO bookstore.z_1authors VALUES (1, 1)")
            }
            async let written: (any Error)? = Self.error {
                try await writer.writeWithoutTransaction { try $0.execute("INSERT INTO bookstore.zpublication (z_pk) VALUES (1); COMMIT") }
            }
            // The writer waits first, as it would once the first trigger is made.
            try await Self.waitUntilASessionWaitsForALock(running: "INSERT INTO bookstore.zpublication", configuration)
            let refusal = await Self.error {
                try await migration.writeWithoutTransaction { connection in
                    do {
                        _ = try PostgresChangeCapture.install(tables: Self.tables, storeSchema: "bookstore", lockTimeout: .seconds(3), on: connection)
                    } catch {
                        (connection as? any InterruptibleConnection)?.rollback()
                        throw error
                    }
                }
            }
            #expect((refusal as? DatabaseError)?.sqlState == "55P03", "the install gave way: \(String(describing: refusal))")
            let failure = await written
            #expect(failure == nil, "the writer's transaction: \(String(describing: failure))")
            let rows = try await migration.write { try $0.scalar("SELECT count(*) FROM bookstore.zpublication")?.int64 }
            #expect(rows == 1)
        }
    }

    /// A change whose transaction is still open is left for a claim after its commit.
    @Test func aChangeNotYetCommittedIsLeftForALaterClaim() async throws {
        try await withStore { migration, writer, _ in
            let capture = try await Self.install(on: migration)
            _ = try await writer.write { try $0.run(rawSQL: "INSERT INTO bookstore.zpublication (z_pk, ztitle) VALUES (1, 'committed')", []) }
            try await writer.writeWithoutTransaction { try $0.execute("BEGIN; INSERT INTO bookstore.zpublication (z_pk, ztitle) VALUES (2, 'open')") }
            let first = try await migration.write { try capture.claim(limit: 10, on: $0) }
            #expect(first.map(\.keys) == [[1]])
            try await writer.writeWithoutTransaction { try $0.execute("COMMIT") }
            let second = try await migration.write { try capture.claim(limit: 10, on: $0) }
            #expect(second.map(\.keys) == [[2]])
        }
    }

    @Test func aTableNamedByNoKeyOrThreeIsRefused() async throws {
        try await withStore { migration, _, _ in
            for keys in [[], ["a", "b", "c"]] {
                let error = await #expect(throws: PostgresChangeCaptureError.self) {
                    try await migration.write {
                        try PostgresChangeCapture.install(tables: [.init(name: "zpublication", keyColumns: keys)], storeSchema: "bookstore", on: $0)
                    }
                }
                let message = error.map(String.init(describing:)) ?? ""
                #expect(message.contains("zpublication is named by \(keys.count) key columns"), "\(message)")
            }
            let schemas = try await Self.captureSchemas(on: migration)
            #expect(schemas.isEmpty, "nothing installed")
        }
    }

    /// Whether `body` throws.
    static func fails(_ body: () async throws -> Void) async -> Bool {
        await error(body) != nil
    }

    /// What `body` throws, if it does.
    static func error(_ body: () async throws -> Void) async -> (any Error)? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    /// Waits until a session whose statement begins with `statement` waits for a lock
    /// (`pg_locks`), seen from a session of its own; fails after five minutes (a hang, not a
    /// slow machine), the last look after the time is up.
    static func waitUntilASessionWaitsForALock(running statement: String, _ configuration: PostgresConfiguration) async throws {
        let observer = try await PostgresDatabase.open(configuration, readerCount: 0)
        let deadline = ContinuousClock.now + .seconds(300)
        var waiting = false
        do {
            while true {
                waiting =
                    try await observer.writeWithoutTransaction { connection in
                        try connection.scalar(
                            rawSQL: """
                                SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.query LIKE $1
                                """,
                            [.text(statement + "%")]
                        )?.int64 ?? 0
                    } > 0
                guard !waiting, ContinuousClock.now < deadline else { break }
                // Polling pace only: the loop waits for the lock wait itself.
                try await Task.sleep(for: .milliseconds(10))
            }
        } catch {
            await observer.close()
            throw error
        }
        await observer.close()
        try #require(waiting, "no session running \(statement) waited for a lock within five minutes")
    }

    static func triggers(on database: PostgresDatabase) async throws -> Int64 {
        try await database.write { connection in
            try connection.scalar(
                """
                SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
                WHERE NOT t.tgisinternal AND n.nspname IN ('bookstore', 'bookstore2')
                """
            )?.int64 ?? -1
        }
    }

    static func captureSchemas(on database: PostgresDatabase) async throws -> [String] {
        try await database.write { connection in
            try connection.rows("SELECT nspname FROM pg_namespace WHERE nspname LIKE '%\\_capturing\\_%' ORDER BY nspname").compactMap { $0[0].text }
        }
    }
}
