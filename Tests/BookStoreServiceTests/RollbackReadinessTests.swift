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

/// A replica of the release that writes BookStore 5 while an operator rolls the store back
/// to BookStore 4 (`bookstore migrate --to 4 --accept-data-loss`): once the store is back,
/// the replica's `/health` fails (`outdated`, 503) saying which release to deploy — the one
/// that runs BookStore 4, not a newer one — and its data requests are answered 503 too.
@Suite struct RollbackReadinessTests {
    @Test(arguments: TestEngine.allCases)
    func theReplicaOfTheNewerReleaseSaysToDeployTheOlderOne(engine: TestEngine) async throws {
        let models = try loadModels()
        try await engine.withStoreURL { url in
            try await seed(url, version: 5)
            let service = BookStoreService(
                configuration: ServiceConfiguration(store: url, models: models, address: .tcp(host: "127.0.0.1", port: 0)),
                logger: quietLogger
            )
            try await service.makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                let ready = try await client.send(.get, "/health")
                #expect(ready.status == .ok && ready.json["model"]?.string == "BookStore 5")

                try await BookStoreMigration.migrator(models: models, logger: quietLogger)
                    .migrateStore(at: url, to: "BookStore 4", acceptingDataLoss: true)

                // The replica reads the store's version at most every two seconds.
                let health = try await firstHealth(after: "ok", client, timeout: .seconds(30))
                #expect(health.status == .serviceUnavailable)
                #expect(health.json["status"]?.string == "outdated", "\(health.json)")
                let reason = health.json["reason"]?.string ?? ""
                #expect(
                    reason.contains(
                        "the store was migrated to model version 'BookStore 4' since this process opened it; this process runs 'BookStore 5'"
                    ),
                    "\(health.json)"
                )
                #expect(reason.contains("deploy the release that runs model version 'BookStore 4'"), "\(health.json)")
                #expect(!reason.contains("new release"), "\(health.json)")
                let list = try await client.send(.get, "/publications")
                expectProblem(list, .serviceUnavailable)
                #expect(list.json["title"]?.string == "The store was migrated to another release", "\(list.json)")
            }
        }
    }

    /// A replica of the newer release (re)started on a store rolled back to BookStore 4
    /// does not take it forward again: it waits, answering 503 and saying why, the store
    /// left at BookStore 4; once an operator migrates it forward (`bookstore migrate`), it
    /// serves it, and the store no longer says it was taken back.
    @Test(arguments: TestEngine.allCases)
    func aReplicaOfTheNewerReleaseStartingAfterARollbackWaitsRatherThanUndoingIt(engine: TestEngine) async throws {
        let models = try loadModels()
        try await engine.withStoreURL { url in
            try await seed(url, version: 5)
            try await BookStoreMigration.migrator(models: models, logger: quietLogger)
                .migrateStore(at: url, to: "BookStore 4", acceptingDataLoss: true)
            #expect(try await PersistentStore.metadata(at: url).migratedBackFrom == "BookStore 5")

            let service = try makeService(url)
            try await service.makeApplication().test(.router) { client in
                let health = try await firstHealth(after: "starting", client, timeout: .seconds(60))
                #expect(health.status == .serviceUnavailable)
                #expect(health.json["status"]?.string == "waiting" && health.json["storeVersion"]?.string == "BookStore 4", "\(health.text)")
                #expect(
                    health.json["reason"]?.string?.contains("the store was migrated back from BookStore 5 to BookStore 4 (a rollback)") == true,
                    "\(health.text)"
                )
                let list = try await client.send(.get, "/publications")
                expectProblem(list, .serviceUnavailable)
                #expect(list.json["detail"]?.string?.contains("start-up does not undo a rollback") == true, "\(list.text)")
                // It did not migrate.
                #expect(try models.model(version: 4).isCompatible(with: try await PersistentStore.metadata(at: url)))

                let forward = try await BuiltCommand("bookstore", unsetEnvironment: ["BOOKSTORE_STORE"]).run(["migrate", "--store", url.description])
                #expect(forward.status == 0, "\(forward.stderr)")
                try await waitUntilReady(client)
                let served = try await client.send(.get, "/publications")
                #expect(served.status == .ok && served.json["total"]?.int == 4, "\(served.text)")
                #expect(try await PersistentStore.metadata(at: url).migratedBackFrom == nil)
            }
        }
    }

    /// A replica waiting on a store taken back to BookStore 3 sees it moved on to BookStore 4
    /// by a migration that named its target (the mark gone): it migrates the rest itself and
    /// serves.
    @Test(arguments: TestEngine.allCases)
    func aWaitingReplicaMigratesOnceTheStoreIsNoLongerTakenBack(engine: TestEngine) async throws {
        let models = try loadModels()
        try await engine.withStoreURL { url in
            try await seed(url, version: 5)
            let migrator = try BookStoreMigration.migrator(models: models, logger: quietLogger)
            try await migrator.migrateStore(at: url, to: "BookStore 3", acceptingDataLoss: true)
            let service = try makeService(url)
            try await service.makeApplication().test(.router) { client in
                let health = try await firstHealth(after: "starting", client, timeout: .seconds(60))
                #expect(health.json["status"]?.string == "waiting" && health.json["storeVersion"]?.string == "BookStore 3", "\(health.text)")
                try await BookStoreMigration.migrator(models: models, logger: quietLogger).migrateStore(at: url, to: "BookStore 4")
                try await waitUntilReady(client)
                let served = try await client.send(.get, "/publications")
                #expect(served.status == .ok && served.json["total"]?.int == 4, "\(served.text)")
                let metadata = try await PersistentStore.metadata(at: url)
                #expect(metadata.modelVersionName == "BookStore 5" && metadata.migratedBackFrom == nil)
            }
        }
    }

    /// The earlier release (whose chain ends at BookStore 4) refuses a BookStore 5 store
    /// when it opens it, as newer than it knows, and leaves it as it was; once the store is
    /// migrated back, it opens it as its current version.
    @Test(arguments: TestEngine.allCases)
    func theEarlierReleaseOpensTheStoreOnlyOnceItIsBack(engine: TestEngine) async throws {
        let models = try loadModels()
        let earlier = try VersionedModel(name: "BookStore", versions: Array(models.versions.versions.prefix(4)), currentVersionName: "BookStore 4")
        let earlierChain = try MigrationChain(
            EarlierBookStoreVersion.self,
            models: earlier,
            mappingModels: models.mappingModels.filter { $0.destinationModelName != "BookStore 5" && $0.sourceModelName != "BookStore 5" },
            policies: BookStoreMigration.policies
        )
        try await engine.withStoreURL { url in
            try await seed(url, version: 5)
            let before = try await StoreSnapshot(url)
            let migrator = ProgressiveMigrator(chain: earlierChain, logger: quietLogger)
            let error = await #expect(throws: MigrationError.self) { _ = try await migrator.openStore(at: url) }
            #expect(error?.code == .newerStore, "\(String(describing: error))")
            #expect(
                error?.message.contains("'BookStore 5', which is newer than every version this app knows") == true,
                "\(String(describing: error))"
            )
            try await expectUnchanged(url, since: before)

            try await BookStoreMigration.migrator(models: models, logger: quietLogger)
                .migrateStore(at: url, to: "BookStore 4", acceptingDataLoss: true)
            let store = try await migrator.openStore(at: url)
            #expect(store.model.name == "BookStore 4")
            await store.close()
        }
    }
}

/// BookStore's chain as the release before BookStore 5 shipped it.
enum EarlierBookStoreVersion: String, MigrationVersion, CaseIterable {
    case v1 = "BookStore"
    case v2 = "BookStore 2"
    case v3 = "BookStore 3"
    case v4 = "BookStore 4"
    var modelName: String { rawValue }
    func nextVersion() -> EarlierBookStoreVersion? {
        switch self {
        case .v1: .v2
        case .v2: .v3
        case .v3: .v4
        case .v4: nil
        }
    }
}
