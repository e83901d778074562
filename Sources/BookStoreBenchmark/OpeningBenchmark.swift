import BookStore
import Logging
import Persistence

/// Opening a store that is already current, as the service does on start-up (open it with
/// the current model, which would migrate an older store first) and reading one row,
/// against opening the bare database as the store opens it (a writer and the default
/// readers) and reading one row.
struct OpeningBenchmark {
    let backend: any BenchmarkBackend
    let models: BookStoreModels
    let logger: Logger
    static let repetitions = 21

    /// Medians, in milliseconds.
    struct Result: Encodable {
        var storeMilliseconds: Double
        var databaseMilliseconds: Double
        var overheadMilliseconds: Double

        init(storeMilliseconds: Double, databaseMilliseconds: Double) {
            self.storeMilliseconds = storeMilliseconds.rounded(places: 2)
            self.databaseMilliseconds = databaseMilliseconds.rounded(places: 2)
            overheadMilliseconds = (storeMilliseconds - databaseMilliseconds).rounded(places: 2)
        }
    }

    func run(on url: StoreURL) async throws -> Result {
        let migrator = try BookStoreMigration.migrator(models: models, logger: logger)
        let current = models.current
        var store: [Double] = []
        var database: [Double] = []
        for _ in 0..<Self.repetitions {
            var started = ContinuousClock.now
            let container = PersistentContainer(store: try await migrator.openStore(at: url), logger: logger)
            precondition(container.model.name == current.name, "the store should be current")
            _ = try await container.store.database.read { try $0.scalar("SELECT 1") }
            await container.store.close()
            store.append((ContinuousClock.now - started).seconds * 1_000)

            started = ContinuousClock.now
            let bare = try await backend.openDatabase(url, readers: true)
            _ = try await bare.read { try $0.scalar("SELECT 1") }
            await bare.close()
            database.append((ContinuousClock.now - started).seconds * 1_000)
        }
        return Result(storeMilliseconds: median(store), databaseMilliseconds: median(database))
    }

    private func median(_ values: [Double]) -> Double {
        values.sorted()[values.count / 2]
    }
}
