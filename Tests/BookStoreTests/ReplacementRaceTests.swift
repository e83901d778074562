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

    @Test(arguments: TestEngine.allCases)
    func aWriteInTheInstantTheLockIsLetGoIsMigratedByARunAgain(engine: TestEngine) async throws {
        try await StepResumptionTests.withStoreAtVersion4(engine) { url in
            let written = Mutex(0)
            let recorder = LogRecorder()
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: recorder.logger) { checkpoint in
                guard checkpoint == .lockLetGo, case .sqlite(let path) = url.kind else { return }
                // Once: another process's commit, as the lock is free.
                guard written.withLock({ count in defer { count += 1 }; return count == 0 }) else { return }
                let other = try SQLiteConnection(path: path, mode: .readWrite)
                defer { other.close() }
                try other.execute("UPDATE ZPUBLICATION SET ZTITLE = '\(Self.title)' WHERE Z_PK = 1")
            }
            try await migrator.migrateStore(at: url)
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 5")
            try await expectNoLeftovers(url)
            if engine == .sqlite {
                #expect(written.withLock { $0 } == 2, "the lock is let go once per run: two runs")
                #expect(recorder.all.contains { $0.contains("migrating again") && $0.contains("2 of 3") }, "\(recorder.all.filter { $0.hasPrefix("notice") })")
                // The write went through the migration: BookStore 5's synopsis is the title.
                let row = try await PersistentStore.inspect(url) { connection in
                    try connection.rows("SELECT ZTITLE, ZSYNOPSIS FROM ZPUBLICATION WHERE Z_PK = 1").first
                }
                #expect(row?[0].text == Self.title && row?[1].text == Self.title, "\(String(describing: row))")
            } else {
                // PostgreSQL swaps in the fence's transaction and never lets the lock go.
                #expect(written.withLock { $0 } == 0)
            }
        }
    }
}
