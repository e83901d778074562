import ArgumentParser
import Foundation
import Logging

/// `bookstore-benchmark`: how fast BookStore's migrations and service are, measured against
/// hand-written SQL and a bare handler in the same run. Build it in release mode
/// (`scripts/benchmark.sh` does).
@main
struct BenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookstore-benchmark",
        abstract: "Benchmark BookStore's migrations against hand-written SQL, and its service against a bare handler.",
        subcommands: [MigrateBenchmarkCommand.self, HTTPBenchmarkCommand.self, SavesCommand.self, WriteCommand.self, OnePassCommand.self],
        defaultSubcommand: MigrateBenchmarkCommand.self
    )
}

/// Where the benchmark's PostgreSQL databases come from.
struct PostgresOptions: ParsableArguments {
    @Option(
        name: .customLong("postgres-url"),
        help: ArgumentHelp(
            "A PostgreSQL server whose user may create databases (postgres://user@host:port/postgres). Without it a throwaway server is started.",
            valueName: "url"
        )
    )
    var url: String?

    /// Hands the URL to the throwaway-server helper, which reads it from the environment.
    func apply() {
        if let url { setenv("BOOKSTORE_TEST_POSTGRES_URL", url, 1) }
    }
}

/// The backends a run covers.
enum BackendName: String, ExpressibleByArgument, CaseIterable {
    case sqlite
    case postgres
}

extension Logger {
    /// The framework's logger during a benchmark: warnings and errors only, so its output
    /// is the report.
    static func benchmark(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "bookstore-benchmark")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
