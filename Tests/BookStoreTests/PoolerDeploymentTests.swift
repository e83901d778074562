import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `bookstore` deployed behind PgBouncer in transaction mode (``TestPgBouncer``): the store
/// URL through the pooler, migrations over the server itself.
@Suite("bookstore behind a connection pooler")
struct PoolerDeploymentTests {
    /// Replicas migrating one outdated store at once through the pooler, each with the
    /// direct URL for its migration: one migrates, the others wait for its lock and find the
    /// store current; every row of the seed is there.
    @Test func replicasThroughThePoolerGiveOneMigration() async throws {
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, direct in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--store", pooled.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let books = try await PersistentStore.inspect(direct) { try $0.scalar("SELECT count(*) FROM ZBOOK")?.int64 }
            let outputs = try await withThrowingTaskGroup(of: BuiltCommand.Output.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await BookStoreProcess.command.run([
                            "migrate", "--store", pooled.description, "--migration-store", direct.description,
                            "--log-level", "notice",
                        ])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for output in outputs { #expect(output.status == 0, "\(output.stderr)") }
            #expect(outputs.filter { $0.stdout.contains("Migrated \(direct)") }.count == 1, "\(outputs.map(\.stdout))")
            let status = try await BookStoreProcess.command.run(["status", "--store", pooled.description])
            #expect(status.stdout.contains("Compatible:            yes"), "\(status.stdout)")
            let publications = try await PersistentStore.inspect(pooled) { try $0.scalar("SELECT count(*) FROM ZPUBLICATION")?.int64 }
            #expect(publications == books)
        }
    }

    /// Without a migration URL, a migration through the pooler is refused before it writes,
    /// saying how to give one.
    @Test func aMigrationThroughThePoolerWithoutADirectURLIsRefused() async throws {
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, direct in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "2", "--store", pooled.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let before = try await StoreSnapshot(direct)
            let migrate = try await BookStoreProcess.command.run(["migrate", "--store", pooled.description])
            #expect(migrate.status == 1)
            #expect(migrate.stderr.contains("pooler in transaction mode"), "\(migrate.stderr)")
            #expect(migrate.stderr.contains("--migration-store URL or BOOKSTORE_MIGRATION_STORE"), "\(migrate.stderr)")
            try await expectUnchanged(direct, since: before)
        }
    }
}
