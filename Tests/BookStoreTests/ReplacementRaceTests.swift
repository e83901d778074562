import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// On SQLite the migrated store is copied into the store's file by SQLite's backup API,
/// which must take the writers' lock itself: the migration lets it go for an instant, and
/// another process may commit there. The copy is then refused (it would overwrite that
/// write) and the migration runs again from the store as it is, write included.
///
/// Found from outside: the kill trials' writer (a `sqlite3` process every 20 ms) made one
/// migration in a hundred fail at its very end ("another process wrote to the store in the
/// instant …; migrate again").
@Suite struct ReplacementRaceTests {
    static let title = "Écrit pendant la copie — 2ᵉ essai"

    /// SQLite: the lock is let go for the backup's instant, another process commits there,
    /// and the run begins again from the store with the write.
    @Test func aWriteInTheInstantTheLockIsLetGoIsMigratedByARunAgain() async throws {
        try await StepResumptionTests.withStoreAtVersion4(.sqlite) { url in
            let written = Mutex(0)
            let recorder = LogRecorder()
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: recorder.logger) { checkpoint in
                guard checkpoint == .lockLetGo, case .sqlite(let path) = url.kind else { return }
                // Once: another process's commit, as the lock is free.
                guard
                    written.withLock({ count in
                        defer { count += 1 }
                        return count == 0
                    })
                else { return }
                let other = try SQLiteConnection(path: path, mode: .readWrite)
                defer { other.close() }
                try other.execute(rawSQL: "UPDATE ZPUBLICATION SET ZTITLE = '\(Self.title)' WHERE Z_PK = 1")
            }
            try await migrator.migrateStore(at: url)
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 5")
            try await expectNoLeftovers(url)
            #expect(written.withLock { $0 } == 2, "the lock is let go once per run: two runs")
            #expect(
                recorder.all.contains { $0.contains("migrating again") && $0.contains("2 of 3") },
                "\(recorder.all.filter { $0.hasPrefix("notice") })"
            )
            // The write went through the migration: BookStore 5's synopsis is the title.
            let row = try await PersistentStore.inspect(url) { connection in
                try connection.rows("SELECT ZTITLE, ZSYNOPSIS FROM ZPUBLICATION WHERE Z_PK = 1").first
            }
            #expect(row?[0].text == Self.title && row?[1].text == Self.title, "\(String(describing: row))")
        }
    }

    /// PostgreSQL swaps the migrated tables in inside the fence's transaction and never lets
    /// the lock go: another session's write made as the step swaps in is seen waiting for
    /// the fence, the migration ends in one run, and then the write lands in the migrated
    /// store (the synopsis, migrated before it, keeps the old title).
    @Test func onPostgreSQLAWriteAsTheStepSwapsInWaitsAndLandsInTheMigratedStore() async throws {
        try await StepResumptionTests.withStoreAtVersion4(.postgres) { url in
            guard case .postgres(let configuration) = url.kind else {
                Issue.record("not a PostgreSQL store: \(url.kind)")
                return
            }
            let before = try await PersistentStore.inspect(url) { try $0.scalar("SELECT ZTITLE FROM ZPUBLICATION WHERE Z_PK = 1")?.text }
            let outcome = Mutex<Result<Void, DatabaseError>?>(nil)
            let sawItWait = Mutex<Bool?>(nil)
            let recorder = LogRecorder()
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: recorder.logger) { checkpoint in
                guard case .swapping = checkpoint, sawItWait.withLock({ $0 }) == nil else { return }
                Thread.detachNewThread {
                    let result = Result { () throws(DatabaseError) in
                        let other = try PostgresConnection(configuration: configuration)
                        try other.execute(rawSQL: "UPDATE \(configuration.quotedSchema).zpublication SET ztitle = '\(Self.title)' WHERE z_pk = 1")
                    }
                    outcome.withLock { $0 = result }
                }
                sawItWait.withLock { $0 = Self.waitUntilAnUpdateWaits(configuration) }
            }
            try await migrator.migrateStore(at: url)
            #expect(sawItWait.withLock { $0 } == true, "the other session's write was not seen waiting while the step swapped in")
            #expect(!recorder.all.contains { $0.contains("migrating again") }, "PostgreSQL never lets the lock go: one run")
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 5")
            try await expectNoLeftovers(url)
            // The write, released with the fence, ends on its own thread.
            let deadline = ContinuousClock.now + .seconds(60)
            while outcome.withLock({ $0 }) == nil, ContinuousClock.now < deadline {
                // Polling pace only: the loop waits for the writer's thread to finish.
                try await Task.sleep(for: .milliseconds(10))
            }
            let result = outcome.withLock { $0 }
            #expect((try? result?.get()) != nil, "the write waiting for the migration: \(String(describing: result))")
            let row = try await PersistentStore.inspect(url) { connection in
                try connection.rows("SELECT ZTITLE, ZSYNOPSIS FROM ZPUBLICATION WHERE Z_PK = 1").first
            }
            #expect(row?[0].text == Self.title && row?[1].text == before, "\(String(describing: row))")
        }
    }

    /// Waits (blocking its thread: the migration's hook is synchronous) until a session
    /// waits for a lock with an update of the publications; false after five minutes (a hang,
    /// not a slow machine), the last look after the time is up.
    static func waitUntilAnUpdateWaits(_ configuration: PostgresConfiguration) -> Bool {
        guard let observer = try? PostgresConnection(configuration: configuration) else { return false }
        let deadline = ContinuousClock.now + .seconds(300)
        while true {
            let waiting = try? observer.scalar(
                """
                SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.query LIKE 'UPDATE %zpublication SET ztitle%'
                """
            )?.int64
            if (waiting ?? 0) > 0 { return true }
            guard ContinuousClock.now < deadline else { break }
            // Polling pace only: the loop waits for the lock wait itself.
            usleep(10_000)
        }
        return false
    }
}
