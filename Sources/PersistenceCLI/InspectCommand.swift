import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show which model version a store holds, how that was decided, and what it holds.",
        discussion: """
            With --models: the store's model version, recognised by its entity version hashes or, for a \
            store written by Apple's Core Data, by its tables; its entities with their row counts; and the \
            steps that would migrate it to the current version. Without: its metadata and tables. Only reads the store.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The store URL: sqlite:///path or postgres://user@host/database[?schema=NAME].", valueName: "url"))
    var store: String

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String?

    @Option(name: .long, help: ArgumentHelp("The store's model version, when its tables fit several.", valueName: "name"))
    var storeVersion: String?

    func run() async throws {
        try await runReportingErrors {
            try await PersistentStore.leavingFilesUntouched { try await report() }
        }
    }

    private func report() async throws {
        let logger = options.makeLogger()
        let url = try StoreURL(store)
        let metadata = try await PersistentStore.metadata(at: url)
        print("Store:          \(url)")
        print("Store type:     \(metadata.storeType)")
        print("Store UUID:     \(metadata.storeUUID)")
        if metadata.isForeign {
            let framework = metadata.additional["NSPersistenceFrameworkVersion"].map { ", framework version \(Self.describe($0))" } ?? ""
            print("Written by:     Apple's Core Data (no model version name of ours\(framework))")
        } else {
            print("Written by:     Persistence, model version \(metadata.modelVersionName ?? "?")")
        }
        guard let models else {
            print("Entity version hashes:")
            for (entity, hash) in metadata.versionHashes.sorted(by: { $0.key < $1.key }) {
                print("  \(entity.padding(toLength: 20, withPad: " ", startingAt: 0)) \(hash.map { String(format: "%02x", $0) }.joined())")
            }
            let identifiers = metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", ")
            print("Version identifiers: [\(identifiers)]")
            for (key, value) in metadata.additional.sorted(by: { $0.key < $1.key }) {
                print("\(key): \(Self.describe(value))")
            }
            print("Tables:")
            for table in try await PersistentStore.tables(at: url) {
                print("  \(table.name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(table.rows) row\(table.rows == 1 ? "" : "s")")
            }
            print("Name the model (--models PATH.xcdatamodeld) to see which of its versions the store holds.")
            return
        }
        let versions = try loadModels(models)
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions), logger: logger)
        let recognised = try migrator.recognisedVersion(of: metadata, store: url, named: storeVersion)
        print(
            "Model:          \(versions.name) (\(versions.versions.count) version\(versions.versions.count == 1 ? "" : "s"), current \(versions.current.name))"
        )
        print("Model version:  \(recognised.model.name)")
        print("Decided by:     \(Self.explain(recognised.method))")
        if !recognised.notes.isEmpty {
            print("Notes (these do not decide the version):")
            for note in recognised.notes { print("  \(note)") }
        }
        let container = try await PersistentContainer.open(model: recognised.model, store: url, options: .readOnly, logger: logger)
        let context = container.newContext()
        print("Entities:")
        let width = max(20, recognised.model.entities.map(\.name.count).max() ?? 0)
        for entity in recognised.model.entities {
            let count = try await context.count(for: FetchRequest(entityName: entity.name, includesSubentities: false))
            print("  \(entity.name.padding(toLength: width, withPad: " ", startingAt: 0)) \(count) row\(count == 1 ? "" : "s")")
        }
        await container.store.close()
        if recognised.model.name == versions.current.name {
            print("The store is at the current version.")
        } else {
            print("To migrate to \(versions.current.name): `persistence migrate --plan` lists the steps.")
        }
    }

    static func explain(_ method: RecognisedStoreVersion.Method) -> String {
        switch method {
        case .versionHashes: "version hashes (the store's entity version hashes are this version's)"
        case .coreDataVersionHashes:
            "Core Data's version hashes (a store of Apple's Core Data: its entity version hashes are the ones Core Data computes for this version, and its tables are this version's)"
        case .structure: "structure (a store of Apple's Core Data: its hashes are Apple's; its tables are this version's and no other's)"
        case .named: "named with --store-version (the store's tables fit it)"
        }
    }

    static func describe(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): "\"\(text)\""
        case .integer(let number): "\(number)"
        default: "\(value)"
        }
    }
}
