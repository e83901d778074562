import ArgumentParser
import Foundation
import Persistence

/// `bookstore-benchmark one-pass`: BookStore 2 → 5 by hand, one `INSERT … SELECT` per table
/// (``HandWrittenMigration/wholeChainStatements()``), on a store `bookstore seed
/// --model-version 2` made: the floor that `bookstore migrate` of a copy of the same store is
/// weighed against from outside, process start and all.
///
/// ```
/// bookstore seed --store a.sqlite --model-version 2 --count 1000000 && cp a.sqlite b.sqlite
/// time bookstore migrate --store a.sqlite
/// time bookstore-benchmark one-pass --store b.sqlite
/// ```
struct OnePassCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "one-pass",
        abstract: "Migrate a BookStore 2 store to BookStore 5 by hand-written SQL, one INSERT … SELECT per table, in one transaction.",
        discussion: "Prints the seconds the statements took. The store is rewritten: run it on a copy."
    )

    @Option(name: .long, help: ArgumentHelp("The store URL (a BookStore 2 store).", valueName: "url"))
    var store: String

    func run() async throws {
        let url = try StoreURL(store)
        let database: any Database =
            switch url.kind {
            case .sqlite(let path): try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: 0)
            case .postgres(let configuration): try await PostgresDatabase.open(configuration, readerCount: 0)
            default: throw ValidationError("one-pass runs on a SQLite file or a PostgreSQL store, not \(store)")
            }
        let migration = HandWrittenMigration(dialect: database.dialect, style: .rebuild)
        let started = ContinuousClock.now
        do {
            try await migration.run(migration.wholeChainStatements(), on: database)
        } catch {
            await database.close()
            throw error
        }
        let seconds = (ContinuousClock.now - started).seconds
        await database.close()
        print(String(format: "one pass: %.3f s", seconds))
    }
}
