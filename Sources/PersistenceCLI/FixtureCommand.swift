import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

struct FixtureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixture",
        abstract: "Write a new store at a model version holding the rows of a JSON file: a frozen fixture for migration tests.",
        discussion: """
            The rows are a JSON array of {"entity": "Book", "label": "dune", "values": {"title": "Dune", "price": 9.5}, \
            "relationships": {"pages": ["p1"]}}, values typed by the version's attributes (numbers, true/false, \
            strings; dates in ISO 8601, UUIDs, Base64 bytes as strings). Freeze one store per shipped version, commit \
            it, and migrate copies of it in tests (`MigrationTestKit.withCopy(ofFixture:_:)` of PersistenceTesting). \
            A store already at --store is refused and left as it is.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String

    @Option(name: .long, help: ArgumentHelp("The model version the store is written at (the current one when omitted).", valueName: "name"))
    var version: String?

    @Option(name: .long, help: ArgumentHelp("The JSON file of rows.", valueName: "file"))
    var rows: String

    @Option(
        name: .long,
        help: ArgumentHelp("Where to write the store: sqlite:///path or postgres://user@host/database[?schema=NAME].", valueName: "url")
    )
    var store: String

    func run() async throws {
        try await runReportingErrors {
            let logger = options.makeLogger()
            let versions = try loadModels(models)
            let model: ManagedObjectModel
            if let version {
                guard let named = versions.version(named: version) else {
                    throw CommandError(
                        "\(models) has no model version '\(version)'",
                        hint: "name one of \(versions.versions.map { "'\($0.name)'" }.joined(separator: ", "))"
                    )
                }
                model = named
            } else {
                model = versions.current
            }
            let url = try StoreURL(store)
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: rows))
            } catch {
                throw CommandError("\(rows) cannot be read", hint: "name the JSON file of rows")
            }
            let written: [FixtureRow]
            do {
                written = try FixtureRow.rows(fromJSON: data, model: model)
            } catch let error as FixtureError {
                throw CommandError("\(rows): \(error)", hint: "fix the file; nothing was written")
            }
            try await FixtureRow.write(written, into: url, model: model, logger: logger)
            print("Wrote \(url): model version \(model.name), \(written.count) row\(written.count == 1 ? "" : "s").")
        }
    }
}
