import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Apple's stores of a model with entity inheritance: every car in `ZCAR`, told apart by
/// `Z_ENT` numbered by inheritance tree (1 Car, 2 SportCar, 3 ExpensiveSportCar, 4 Person),
/// and a renamed entity still under its old name in `Z_PRIMARYKEY`.
///
/// SQLite: these are Apple's files as Core Data wrote them.
@Suite("Core Data stores: cars, with inheritance")
struct CarsStoreTests {
    @Test(arguments: [CarsFixtures.version1, CarsFixtures.version2])
    func inspectNamesTheVersionThatWroteTheStore(store: CarsFixtures.Store) async throws {
        try await CarsFixtures.withCopy(of: store) { url in
            let path = try #require(url.filePath)
            let output = try await persistenceCommand.run(["inspect", "--store", "sqlite://\(path)", "--models", CarsFixtures.models.path])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout.contains("Model version:  \(store.versionName)\n"), "\(output.stdout)")
            #expect(output.stdout.contains("Decided by:     Core Data's version hashes"), "\(output.stdout)")
            let subentity = store.versionName == "SampleModel" ? "ExpensiveSportCar" : "LuxuryCar"
            #expect(output.stdout.contains("  \(subentity.padding(toLength: 20, withPad: " ", startingAt: 0)) 5 rows\n"), "\(output.stdout)")
        }
    }

    /// On PostgreSQL, a copy of the second store names the renamed entity by its old name in
    /// Z_PRIMARYKEY; its tables are still the store's own, which removing it takes.
    @Test func aPostgreSQLCopyOfTheSecondStoreIsRemovedWhole() async throws {
        try await CarsFixtures.withCopy(of: CarsFixtures.version2) { url in
            try await TestEngine.postgres.withStoreURL { postgres in
                _ = try await StoreCopy.copy(from: url, to: postgres, versions: try CarsFixtures.versionedModel(), logger: testLogger)
                #expect(try await storeRows(postgres, "SELECT Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT = 3") == [[.text("ExpensiveSportCar")]])
                try await PersistentStore.destroy(at: postgres, logger: testLogger)
                let left = try await PersistentStore.inspect(postgres) {
                    try $0.rows("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").count
                }
                #expect(left == 0)
            }
        }
    }

    /// Fetched by the store's own numbers: a fetch of an entity takes its sub-entities' rows.
    @Test func theFirstStoreOpensAndFetchesThroughTheHierarchy() async throws {
        try await CarsFixtures.withCopy(of: CarsFixtures.version1) { url in
            let model = try #require(try CarsFixtures.versionedModel().version(named: "SampleModel"))
            try await withOpenStore(url, model: model) { container in
                #expect(container.store.schema.numbering == EntityNumbering.coreData(model))
                let context = container.newContext()
                let cars = try await context.count(for: FetchRequest(entityName: "Car"))
                let sportCars = try await context.count(for: FetchRequest(entityName: "SportCar"))
                let expensive = try await context.fetch(FetchRequest(entityName: "ExpensiveSportCar"))
                let plainCars = try await context.count(for: FetchRequest(entityName: "Car", includesSubentities: false))
                let counts: [Int] = [cars, sportCars, expensive.count, plainCars]
                #expect(counts == [125, 10, 5, 115])
                #expect(expensive.allSatisfy { $0.entity.name == "ExpensiveSportCar" })
                #expect(try await context.count(for: FetchRequest(entityName: "Person")) == 20)
            }
        }
    }

    /// An index never decides which version wrote a store: without its compound fetch index
    /// the second store is still its version, and the recognition's notes name the index.
    @Test func aStoreWithoutTheModelsFetchIndexIsItsVersionWithANote() async throws {
        try await CarsFixtures.withCopy(of: CarsFixtures.version2) { url in
            let connection = try SQLiteConnection(path: try #require(url.filePath), mode: .readWrite)
            try connection.execute("DROP INDEX Z_Car_byMakerAndNumberPlate")
            try connection.execute("CREATE INDEX Z_Car_leftBehind ON ZCAR (ZMODEL)")
            connection.close()
            let recognised = try await CarsFixtures.versionedModel().recogniseVersion(ofStoreAt: url)
            #expect(recognised.model.name == CarsFixtures.version2.versionName)
            #expect(
                recognised.notes == [
                    "the store lacks the index Z_Car_byMakerAndNumberPlate on ZCAR (ZMAKER, ZNUMBERPLATE) of the model's constraints and fetch indexes",
                    "the store has the index Z_Car_leftBehind on ZCAR (ZMODEL), which the model's constraints and fetch indexes do not make",
                ]
            )
        }
    }
}
