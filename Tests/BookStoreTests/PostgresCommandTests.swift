import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The bookstore command on PostgreSQL stores, as a user would run it, beside SQLite where
/// both engines apply.
@Suite("bookstore on PostgreSQL")
struct PostgresCommandTests {
    func publications(_ url: StoreURL) async throws -> [[String]] {
        let store = try await PersistentStore.open(url, model: try loadModels().current, options: .readOnly, logger: quietLogger)
        let rows = try await store.database.read {
            try $0.rows("SELECT ztitle, zfirstname, zlastname, zsynopsis FROM zpublication ORDER BY z_pk").map { row in
                (0..<4).map { row[$0].text ?? "" }
            }
        }
        await store.close()
        return rows
    }

    @Test(arguments: TestEngine.allCases)
    func aVersion1StoreSeededByTheCommandMigratesToFourPublicationsWithSynopses(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let migrate = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(migrate.stdout.contains("1. BookStore → BookStore 2 (in place: inferred mapping)"))
            let rows = try await publications(url)
            #expect(rows.map { $0[0] } == ["The first book", "The second book", "The third book", "The fourth book"])
            #expect(rows.allSatisfy { $0[3] == $0[0] })
            let status = try await BookStoreProcess.running(["status", "--store", url.description])
            #expect(status.stdout.contains("Compatible:            yes"))
        }
    }

    /// `migrate --online`: on PostgreSQL each phase logged and the store migrated; a SQLite
    /// store refused with what to do instead, unchanged; a setting without the flag refused
    /// before anything runs.
    @Test(arguments: TestEngine.allCases)
    func migrateOnline(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let misplaced = try await BookStoreProcess.running(["migrate", "--cut-over-lock-timeout", "300", "--store", url.description])
            #expect(
                misplaced.status != 0 && misplaced.stderr.contains("--cut-over-lock-timeout applies to an online migration only"),
                "\(misplaced.stderr)"
            )
            let migrate = try await BookStoreProcess.running(["migrate", "--online", "--cut-over-lock-timeout", "300", "--store", url.description])
            switch engine {
            case .postgres:
                #expect(migrate.status == 0, "\(migrate.stderr)")
                let output = migrate.stdout + migrate.stderr
                for phase in ["capture", "copy", "bulk", "catch-up", "cut-over"] {
                    #expect(output.contains("online migration phase") && output.contains("online_phase=\(phase)"), "\(phase): \(output)")
                }
                let rows = try await publications(url)
                #expect(rows.map { $0[0] } == ["The first book", "The second book", "The third book", "The fourth book"])
                #expect(rows.allSatisfy { $0[3] == $0[0] })
                try await expectNoLeftovers(url)
            case .sqlite:
                #expect(migrate.status != 0)
                #expect(migrate.stderr.contains("a SQLite store cannot be migrated online"), "\(migrate.stderr)")
                #expect(migrate.stderr.contains("without --online"), "\(migrate.stderr)")
                let status = try await BookStoreProcess.running(["status", "--store", url.description])
                #expect(status.stdout.contains("Compatible:            no"), "\(status.stdout)")
            }
        }
    }

    @Test func aVersion3SQLiteStoreCopiedToPostgreSQLMigratesToTheNamesTable() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let sqlite = try copyFixture(version: 3, into: directory)
        try await TestPostgres.withDatabase { url in
            var configuration = try #require({ if case .postgres(let c) = url.kind { c } else { nil } }())
            configuration.schema = "copied"
            let target = StoreURL.postgres(configuration)
            let copy = try await BookStoreProcess.running(["copy", "--from", sqlite.description, "--to", target.description])
            #expect(copy.status == 0, "\(copy.stderr)")
            let again = try await BookStoreProcess.running(["copy", "--from", sqlite.description, "--to", target.description])
            #expect(again.status != 0 && again.stderr.contains("--replace"))
            let migrate = try await BookStoreProcess.running(["migrate", "--store", target.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(
                try await publications(target).map { "\($0[0]): \($0[1]) \($0[2])" } == [
                    "The first book: Bill Smith", "The second book: John Doe", "The third book: Jane Doe", "The fourth book: Jack Brown",
                ]
            )
            // And back to SQLite, every row and key with it.
            let back = directory.appendingPathComponent("back.sqlite").path
            let copyBack = try await BookStoreProcess.running(["copy", "--from", target.description, "--to", "sqlite://\(back)"])
            #expect(copyBack.status == 0, "\(copyBack.stderr)")
            let connection = try SQLiteConnection(path: back, mode: .readOnly)
            #expect(
                try connection.rows(rawSQL: "SELECT Z_PK, ZFIRSTNAME FROM ZPUBLICATION ORDER BY Z_PK").map {
                    "\($0[0].int64 ?? 0) \($0[1].text ?? "")"
                }
                    == ["1 Bill", "2 John", "3 Jane", "4 Jack"]
            )
            #expect(try connection.scalar("SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL")?.int64 == 12)
        }
    }
}
