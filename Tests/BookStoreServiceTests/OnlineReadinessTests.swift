import BookStore
import BookStoreTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Persistence
import PersistenceTesting
import Testing

@testable import BookStoreService

/// A replica of the previous release (a service whose current model is BookStore 4) whose
/// store the next release migrates online: its `/health` fails (`outdated`, 503, saying
/// what happened and what to do) once the cut-over is in, so an orchestrator replaces it,
/// and its data requests are answered 503 too.
///
/// PostgreSQL only: online migrations are PostgreSQL's.
@Suite struct OnlineReadinessTests {
    @Test func theServiceOfThePreviousReleaseFailsItsHealthOnceTheStoreIsMigrated() async throws {
        let models = try loadModels()
        let previous = try VersionedModel(name: "BookStore", versions: Array(models.versions.versions.prefix(4)), currentVersionName: "BookStore 4")
        let previousModels = BookStoreModels(
            versions: previous,
            mappingModels: models.mappingModels.filter { $0.destinationModelName != "BookStore 5" }
        )
        try await TestPostgres.withDatabase { url in
            try await seed(url, version: 4)
            let service = BookStoreService(
                configuration: ServiceConfiguration(store: url, models: previousModels, address: .tcp(host: "127.0.0.1", port: 0)),
                logger: quietLogger
            )
            try await service.makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                let ready = try await client.send(.get, "/health")
                #expect(ready.status == .ok && ready.json["model"]?.string == "BookStore 4")

                try await BookStoreMigration.migrator(models: models, logger: quietLogger).migrateStoreOnline(at: url)

                let health = try await firstHealth(after: "ok", client, timeout: .seconds(30))
                #expect(health.status == .serviceUnavailable)
                #expect(health.json["status"]?.string == "outdated", "\(health.json)")
                #expect(
                    health.json["reason"]?.string?.contains(
                        "the store was migrated to model version 'BookStore 5' since this process opened it; this process runs 'BookStore 4'"
                    ) == true,
                    "\(health.json)"
                )
                #expect(health.json["reason"]?.string?.contains("deploy the release that runs model version 'BookStore 5'") == true)
                #expect(health.headers[.retryAfter] == nil, "a replica that will not recover is not asked to be retried")
                let list = try await client.send(.get, "/publications")
                expectProblem(list, .serviceUnavailable)
            }
        }
    }

    /// A replica of the next release started with `onlineMigration`: its start-up migration
    /// runs online (logged in its phases), the store ends at BookStore 5 with nothing beside
    /// it, and the replica is ready then.
    @Test func theNextReleaseMigratesOnlineOnStartUp() async throws {
        try await TestPostgres.withDatabase { url in
            try await seed(url, version: 4)
            let log = LogRecorder()
            let service = BookStoreService(
                configuration: ServiceConfiguration(
                    store: url,
                    models: try loadModels(),
                    address: .tcp(host: "127.0.0.1", port: 0),
                    onlineMigration: OnlineMigrationOptions()
                ),
                logger: log.logger
            )
            try await service.makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                let health = try await client.send(.get, "/health")
                #expect(health.json["model"]?.string == "BookStore 5")
            }
            #expect(log.all.contains { $0.contains("migrating online while the previous release serves") }, "\(log.all.prefix(5))")
            #expect(
                log.all.contains { $0.contains("online migration phase") && $0.contains("cut-over") },
                "\(log.all.filter { $0.contains("online") })"
            )
            try await expectNoLeftovers(url)
        }
    }

    /// Asked to migrate online, a service on a SQLite store (served by it alone) migrates
    /// it offline, saying so, and is ready on BookStore 5.
    @Test func aSQLiteStoreIsMigratedOfflineAndSaysSo() async throws {
        try await TestEngine.sqlite.withStoreURL { url in
            try await seed(url, version: 4)
            let log = LogRecorder()
            let service = BookStoreService(
                configuration: ServiceConfiguration(
                    store: url,
                    models: try loadModels(),
                    address: .tcp(host: "127.0.0.1", port: 0),
                    onlineMigration: OnlineMigrationOptions()
                ),
                logger: log.logger
            )
            try await service.makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                #expect(try await client.send(.get, "/health").json["model"]?.string == "BookStore 5")
            }
            #expect(log.all.contains { $0.contains("the store is migrated offline: its engine has none") }, "\(log.all.prefix(8))")
        }
    }
}
