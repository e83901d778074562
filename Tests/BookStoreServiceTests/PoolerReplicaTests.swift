import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `bookstore serve` replicas deployed behind PgBouncer in transaction mode, as
/// docker-compose.yml deploys them: the store through the pooler, migrations over the
/// server itself.
@Suite("replicas behind a connection pooler")
struct PoolerReplicaTests {
    /// Three replicas started at once on an outdated store: one migrates it over the direct
    /// URL, the others wait for its lock (or find the store migrated) and then serve; all three serve the
    /// same publications through the pooler.
    @Test func threeReplicasStartingOnAnOutdatedStoreGiveOneMigration() async throws {
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, direct in
            try await seed(pooled, version: 1)
            let books = try await PersistentStore.inspect(direct) { try $0.scalar("SELECT count(*) FROM ZBOOK")?.int64 }
            let replicas = try (0..<3).map { _ in
                try ServerProcess([
                    "serve", "--store", pooled.description, "--migration-store", direct.description, "--port", "0", "--log-level", "info",
                ])
            }
            defer { for replica in replicas { replica.kill() } }
            var totals: [String] = []
            for replica in replicas {
                let port = try await replica.port()
                _ = try await waitUntilHealthy(.tcp(port: port))
                let list = try await RawHTTPClient.send("GET", "/publications?limit=1", to: .tcp(port: port))
                #expect(list.status == 200, "\(list.body)")
                totals.append(String(list.body.split(separator: ",").first { $0.contains("\"total\"") } ?? ""))
            }
            #expect(Set(totals).count == 1, "\(totals)")
            #expect(totals.first?.contains("\"total\":\(books ?? -1)") == true, "\(totals)")
            let migrated = replicas.filter { $0.output.contains("migrated store") }
            #expect(migrated.count == 1, "\(replicas.map { $0.output.suffix(1500) })")
            let status = try await PersistentStore.metadata(at: pooled)
            #expect(try loadModels().current.isCompatible(with: status))
        }
    }
}
