import ArgumentParser
import BookStore
import Foundation
import Logging

struct SavesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saves",
        abstract: "Save one object at a time through the framework, against the same writes in hand-written SQL.",
        discussion: """
            For each backend: writes a BookStore 5 store of N generated books, then, in alternating blocks on the \
            same store, updates one publication's price and inserts one publication, each in a save of its own \
            (ManagedObjectContext.save(), as the service's PATCH and POST do) and each in a transaction of \
            hand-written SQL. Prints the median time of a save and of its hand-written transaction and their \
            ratio, and ends with one JSON line per backend.
            """
    )

    @Option(name: .long, help: "Generated books in the store.")
    var books = 1_000

    @Option(name: .long, help: "Saves of each kind, through the framework and by hand each.")
    var saves = 2_000

    @Option(name: .long, parsing: .upToNextOption, help: "The backends to run: sqlite, postgres.")
    var backend: [BackendName] = [.sqlite, .postgres]

    @Option(name: .long, help: ArgumentHelp("Where the SQLite stores are written (default: a temporary folder).", valueName: "folder"))
    var workFolder: String?

    @OptionGroup var postgres: PostgresOptions

    func run() async throws {
        postgres.apply()
        let logger = Logger.benchmark(level: .warning)
        let models = try BookStoreModels.load()
        for name in backend {
            let backend: any BenchmarkBackend =
                switch name {
                case .sqlite: try SQLiteBenchmarkBackend(folder: workFolder)
                case .postgres: PostgresBenchmarkBackend()
                }
            let result: SavesBenchmark.Result
            do {
                result = try await SavesBenchmark(backend: backend, models: models, books: books, saves: saves, logger: logger).run()
            } catch {
                await backend.removeAll()
                throw error
            }
            await backend.removeAll()
            result.printReport()
        }
    }
}
