import ArgumentParser
import BookStore
import Foundation
import Logging

struct MigrateBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a BookStore 2 store of N books and 2N pages to BookStore 5, against hand-written SQL.",
        discussion: """
            For each backend: writes the store, copies it three times, and on the copies runs the framework's \
            migration (`ProgressiveMigrator`, as `bookstore migrate` does), the same changes written by hand in \
            place (ALTER + UPDATE) and written by hand as a rebuild (new tables filled by INSERT … SELECT, old \
            ones dropped). Prints per step and for the chain the time, rows/s, both ratios and the peak resident \
            memory of the framework's migration, checks that the framework's store holds the same rows as the \
            hand-written rebuild, times opening the current store against opening the database, and ends with \
            one JSON line per backend.
            """
    )

    @Option(name: .long, help: "Books in the store (each with an author and two pages).")
    var books = 100_000

    @Option(name: .long, parsing: .upToNextOption, help: "The backends to run: sqlite, postgres.")
    var backend: [BackendName] = [.sqlite, .postgres]

    @Option(name: .long, help: ArgumentHelp("Where the SQLite stores are written (default: a temporary folder).", valueName: "folder"))
    var workFolder: String?

    @OptionGroup var postgres: PostgresOptions

    @Flag(name: .long, help: "Run every step of the framework's migration on its own, without fusing consecutive streamed steps into one pass.")
    var stepByStep = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How the chain's hooks get their instances: declared-values (as BookStore ships) or whole-objects (as before they declared them).",
            valueName: "way"
        )
    )
    var hooks = BookStoreMigration.Hooks.declaredValues

    @Option(name: .long, help: "The framework's log level (info shows its stage lines).")
    var logLevel: Logger.Level = .warning

    @Flag(name: .long, help: "PostgreSQL: migrate online while a writer of the store's version writes it, against the same migration offline.")
    var online = false

    @Option(
        name: .long,
        help: ArgumentHelp("With --online: the store's and the writer's model version, 2 (the whole chain) to 4.", valueName: "version")
    )
    var fromVersion = 2

    @Option(name: .long, help: ArgumentHelp("With --online: the writer's writes per second.", valueName: "count"))
    var writerRate: Double = 200

    func run() async throws {
        postgres.apply()
        let logger = Logger.benchmark(level: logLevel)
        let models = try BookStoreModels.load()
        if online {
            guard (MigrationBenchmark.firstVersion..<MigrationBenchmark.lastVersion).contains(fromVersion) else {
                throw ValidationError("--from-version must be 2, 3 or 4, not \(fromVersion)")
            }
            if backend.contains(.sqlite) { FileHandle.standardError.write(Data("[sqlite] no online migration on SQLite: skipped\n".utf8)) }
            let backend = PostgresBenchmarkBackend()
            let result = try await OnlineMigrationBenchmark(
                backend: backend,
                models: models,
                books: books,
                fromVersion: fromVersion,
                writerRate: writerRate,
                logger: logger
            ).run()
            await backend.removeAll()
            result.printReport()
            return
        }
        for name in backend {
            let backend: any BenchmarkBackend =
                switch name {
                case .sqlite: try SQLiteBenchmarkBackend(folder: workFolder)
                case .postgres: PostgresBenchmarkBackend()
                }
            let result = try await MigrationBenchmark(
                backend: backend,
                models: models,
                books: books,
                fusesSteps: !stepByStep,
                hooks: hooks,
                logger: logger
            ).run()
            await backend.removeAll()
            result.printReport()
        }
    }
}

extension BookStoreMigration.Hooks: ExpressibleByArgument {}
