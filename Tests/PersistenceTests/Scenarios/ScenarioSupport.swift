import Foundation
import Logging
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// What the scenario tests share: where their models and mapping files are, seeding a
/// store through a context, and running a migrator while collecting its progress reports.
/// Each scenario runs on every engine (`TestEngine`), its store seeded at the engine's
/// store URL.
enum Scenario {
    /// `Tests/Fixtures/Scenarios`, found from this file: `Tests/PersistenceTests/Scenarios/ScenarioSupport.swift`.
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Scenarios")

    static let logger = Logger(label: "scenario-tests") { _ in SwiftLogNoOpLogHandler() }

    /// The `.xcdatamodeld` of a scenario: `Tests/Fixtures/Scenarios/<scenario>/<model>.xcdatamodeld`.
    static func models(_ scenario: String, _ model: String) throws -> VersionedModel {
        try VersionedModel(contentsOf: fixtures.appendingPathComponent(scenario).appendingPathComponent("\(model).xcdatamodeld"))
    }

    /// The mapping files of a scenario's folder (`Tests/Fixtures/Scenarios/<scenario>/Mappings`).
    static func mappingModels(_ scenario: String, folder: String = "Mappings", versions: VersionedModel) throws -> [MappingModel] {
        try MappingModel.load(directory: fixtures.appendingPathComponent(scenario).appendingPathComponent(folder), versions: versions)
    }

    /// A version of a versioned model, or a failed expectation.
    static func version(_ name: String, of models: VersionedModel, sourceLocation: SourceLocation = #_sourceLocation) throws -> ManagedObjectModel {
        try #require(models.version(named: name), "no model version '\(name)'", sourceLocation: sourceLocation)
    }

    /// Writes a store of `model` at `url` with what `body` inserts, in one save, and
    /// closes it (on SQLite: the file is complete, no WAL beside it).
    static func seed(_ model: ManagedObjectModel, at url: StoreURL, _ body: (ManagedObjectContext) async throws -> Void) async throws {
        try await makeClosedStore(at: url, model: model) { container in
            let context = container.newContext()
            try await body(context)
            try await context.save()
        }
    }

    /// A context over the store at `url`, opened with `model` (which must fit the store).
    static func open(_ model: ManagedObjectModel, at url: StoreURL) async throws -> ManagedObjectContext {
        try await PersistentContainer.open(model: model, store: url, logger: logger).newContext()
    }

    /// Runs a progressive migration, collecting every progress report it publishes.
    static func migrate(
        _ chain: MigrationChain,
        store url: StoreURL,
        to target: String? = nil,
        batchSize: Int = 1_000
    ) async throws -> (plan: MigrationPlan, progress: [MigrationProgress]) {
        let migrator = ProgressiveMigrator(chain: chain, batchSize: batchSize, logger: logger)
        let updates = migrator.progressUpdates()
        let collector = Task {
            var all: [MigrationProgress] = []
            for await update in updates { all.append(update) }
            return all
        }
        do {
            let plan = try await migrator.migrateStore(at: url, to: target)
            return (plan, await collector.value)
        } catch {
            _ = await collector.value
            throw error
        }
    }

    /// All objects of an entity, in primary-key order.
    static func all(
        _ entity: String,
        in context: ManagedObjectContext,
        where format: String? = nil,
        _ arguments: FormatArgument...
    ) async throws -> [ManagedObject] {
        let predicate = try format.map { try Predicate(format: $0, arguments: arguments) }
        return try await context.fetch(FetchRequest(entityName: entity, predicate: predicate))
    }

    static func count(
        _ entity: String,
        in context: ManagedObjectContext,
        where format: String? = nil,
        _ arguments: FormatArgument...
    ) async throws -> Int {
        let predicate = try format.map { try Predicate(format: $0, arguments: arguments) }
        return try await context.count(for: FetchRequest(entityName: entity, predicate: predicate))
    }

    /// The one object of an entity with `key == value`.
    static func one(
        _ entity: String,
        _ key: String,
        _ value: String,
        in context: ManagedObjectContext,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ManagedObject {
        let found = try await all(entity, in: context, where: "%K == %@", .string(key), .value(.string(value)))
        #expect(found.count == 1, "\(found.count) \(entity) objects with \(key) == \(value)", sourceLocation: sourceLocation)
        return try #require(found.first, sourceLocation: sourceLocation)
    }

    /// The string values of `key` of some objects, sorted.
    static func strings(_ objects: [ManagedObject], _ key: String) -> [String] {
        objects.compactMap { $0.value(forKey: key).stringValue }.sorted()
    }

    /// Whether progress reports go from a start at or above 0 to exactly 1, never backwards.
    static func checkProgress(_ reports: [MigrationProgress], steps: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!reports.isEmpty, "no progress was reported", sourceLocation: sourceLocation)
        guard let first = reports.first, let last = reports.last else { return }
        #expect(first.fractionCompleted >= 0, sourceLocation: sourceLocation)
        #expect(last.fractionCompleted == 1, sourceLocation: sourceLocation)
        #expect(last.step == steps && last.stepCount == steps, sourceLocation: sourceLocation)
        #expect(
            reports.allSatisfy { (0...1).contains($0.fractionCompleted) && (0...1).contains($0.stepFractionCompleted) },
            sourceLocation: sourceLocation
        )
        let backwards = zip(reports, reports.dropFirst()).filter { $0.fractionCompleted > $1.fractionCompleted }
        #expect(backwards.isEmpty, "progress went backwards: \(backwards.prefix(3).map { "\($0.0) → \($0.1)" })", sourceLocation: sourceLocation)
        #expect(
            reports.filter { $0.fractionCompleted == 1 }.allSatisfy { $0.step == steps },
            "only the last step ends the migration",
            sourceLocation: sourceLocation
        )
    }
}

/// A temporary folder for one test's files, removed when the test lets it go.
final class ScenarioFolder: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// An error a scenario's policy throws on purpose.
struct ScenarioPolicyError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
