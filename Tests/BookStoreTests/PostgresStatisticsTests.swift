import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// A PostgreSQL store a migration wrote has the planner's statistics from its first query:
/// every table's row count (`reltuples`, -1 on a table never analyzed) and its columns'
/// value statistics. Without them the planner guesses, and autovacuum counts each table as
/// empty, so the first fifty writes after the migration start a `VACUUM ANALYZE` of the
/// whole table: an online migration of such a store met one in every benchmark run at a
/// million books, competing with it and holding its cut-over off.
///
/// PostgreSQL only: SQLite keeps no statistics a migration could leave stale (the store
/// never runs `ANALYZE`, and its planner goes by the indexes).
@Suite("PostgreSQL: a migrated store is analyzed and logged")
struct PostgresStatisticsTests {
    @Test(arguments: [false, true])
    func everyTableOfAMigratedStoreIsAnalyzed(online: Bool) async throws {
        try await TestEngine.postgres.withSeededStore(books: 300, version: 2) { url in
            let migrator = try BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger)
            let plan = online ? try await migrator.migrateStoreOnline(at: url) : try await migrator.migrateStore(at: url)
            #expect(!plan.isEmpty)
            let (unanalyzed, columns) = try await PersistentStore.inspect(url) { connection in
                let unanalyzed = try connection.rows(
                    """
                    SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.reltuples < 0 ORDER BY 1
                    """
                ).compactMap { $0[0].text }
                let columns = try connection.rows(
                    "SELECT attname FROM pg_stats WHERE schemaname = 'public' AND tablename = 'zpublication' ORDER BY 1"
                )
                .compactMap { $0[0].text }
                return (unanalyzed, columns)
            }
            #expect(unanalyzed.isEmpty, "tables never analyzed: \(unanalyzed)")
            #expect(columns.contains("ztitle") && columns.contains("zprice"), "the publications' column statistics: \(columns)")
            let publications = try await PersistentStore.inspect(url) {
                try $0.scalar("SELECT reltuples FROM pg_class WHERE oid = 'public.zpublication'::regclass")?.double
            }
            #expect(publications ?? 0 >= 300, "the publications' row count: \(publications ?? -1)")
        }
    }

    /// The in-place steps before a streamed one leave the store analyzed when they commit:
    /// the streamed step reads it in chunks, planned by those statistics (a store just seeded
    /// has none; before the in-place step 2 → 3 kept its numbers, its rebuild's output was
    /// analyzed).
    @Test func theInPlaceStepsLeaveTheStoreAnalyzed() async throws {
        try await TestEngine.postgres.withSeededStore(books: 300, version: 2) { url in
            // The server's autovacuum would analyze the tables too, given time (a slow run):
            // only the migration may, here.
            for table in ["zbook", "zpage"] { try await writeRawSQL(url, "ALTER TABLE \(table) SET (autovacuum_enabled = false)") }
            let never = try await PersistentStore.inspect(url) { connection in
                try connection.rows(
                    "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND reltuples < 0 ORDER BY 1"
                ).compactMap { $0[0].text }
            }
            #expect(never.contains("zbook"), "the seeded store was analyzed already: \(never)")
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: quietLogger) { checkpoint in
                if checkpoint == .stepFinished(step: 1) { throw MigrationAbort() }
            }
            await #expect(throws: MigrationAbort.self) { try await migrator.migrateStore(at: url) }
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 3")
            let publications = try await PersistentStore.inspect(url) {
                try $0.scalar("SELECT reltuples FROM pg_class WHERE oid = 'public.zpublication'::regclass")?.double
            }
            #expect(publications ?? 0 >= 300, "the publications' row count: \(publications ?? -1)")
        }
    }

    /// An online migration copies the store into unlogged tables where a step writes a new
    /// store from the copy; where every step runs in place the copy becomes the store, and
    /// is logged: a crash after the cut-over loses nothing.
    @Test func anOnlineMigrationInPlaceLeavesTheStoreLogged() async throws {
        try await TestEngine.postgres.withSeededStore(books: 300, version: 1) { url in
            let plan = try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(
                at: url,
                to: "BookStore 2"
            )
            guard case .inPlace = try #require(plan.steps.first).work else {
                Issue.record("BookStore 1 → 2 was meant to run in place: \(plan.steps.map(\.work))")
                return
            }
            let unlogged = try await PersistentStore.inspect(url) { connection in
                try connection.rows(
                    """
                    SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relpersistence <> 'p' ORDER BY 1
                    """
                ).compactMap { $0[0].text }
            }
            #expect(unlogged.isEmpty, "tables of the store a crash would empty: \(unlogged)")
            let tables = try await PersistentStore.inspect(url) {
                try $0.scalar("SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'")?.int64
            }
            #expect(tables ?? 0 >= 4)
        }
    }
}
