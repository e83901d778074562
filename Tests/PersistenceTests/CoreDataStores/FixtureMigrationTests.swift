import Foundation
import PersistenceTesting
import Testing

@_spi(Testing) @testable import Persistence

/// Apple's stores migrated to their project's current version, on both engines: straight,
/// as Core Data runs it and `persistence migrate` does with no chain given, and through
/// every version in the app's order; each forced through every kind of step the plan can
/// choose. The rows read back at the current version are the rows read at the store's own
/// version before, orders included.
@Suite("Core Data stores: migrated to the current version every way")
struct FixtureMigrationTests {
    /// How the store is migrated.
    struct Way: Sendable, CustomTestStringConvertible {
        /// Through every version in order, rather than as the chain without an order finds.
        let throughEveryVersion: Bool
        /// The kind of step forced, or `nil` for the plan's choice.
        let forcing: MigrationPlan.Strategy?

        var testDescription: String {
            (throughEveryVersion ? "through every version" : "straight") + (forcing.map { ", forced \($0.rawValue)" } ?? "")
        }

        func migrator(
            models: VersionedModel,
            mappingModels: [MappingModel] = [],
            policies: MigrationPolicies = MigrationPolicies()
        ) throws -> ProgressiveMigrator {
            let chain =
                throughEveryVersion
                ? try MigrationChain(models: models, through: models.versions.map(\.name), mappingModels: mappingModels, policies: policies)
                : MigrationChain(models: models, mappingModels: mappingModels, policies: policies)
            guard let forcing else { return ProgressiveMigrator(chain: chain, logger: testLogger) }
            return ProgressiveMigrator(chain: chain, logger: testLogger, forcing: forcing)
        }
    }

    static let ways: [Way] =
        [Way(throughEveryVersion: true, forcing: nil)]
        + [nil, .inPlace, .setBased, .streamed].map { Way(throughEveryVersion: false, forcing: $0) }

    // MARK: Bookmarks

    /// Each bookmark by its uuid: title, url, folder or not, parent, children and favourites in order.
    static func bookmarks(_ url: StoreURL, model: ManagedObjectModel) async throws -> [String] {
        try await withOpenStore(url, model: model) { container in
            let context = container.newContext()
            var result: [String] = []
            for bookmark in try await context.fetch(FetchRequest(entityName: "BookmarkEntity")) {
                func text(_ key: String) -> String { bookmark.value(forKey: key).stringValue ?? "∅" }
                let uuids = { (objects: [ManagedObject]) in objects.map { $0.value(forKey: "uuid").stringValue ?? "?" }.joined(separator: ",") }
                let parent = try await bookmark.destination(forKey: "parent")?.value(forKey: "uuid").stringValue ?? "∅"
                let folder = bookmark.value(forKey: "isFolder") == .bool(true)
                result.append(
                    """
                    \(text("uuid")) \(text("title")) \(text("url")) folder:\(folder) parent:\(parent) \
                    children:\(uuids(try await bookmark.destinations(forKey: "children"))) favorites:\(uuids(try await bookmark.destinations(forKey: "favorites")))
                    """
                )
            }
            return result.sorted()
        }
    }

    @Test(arguments: AppleFixtures.bookmarks.prefix(5), ways)
    func bookmarksReachTheCurrentVersion(store: AppleFixtures.Store, way: Way) async throws {
        for engine in TestEngine.allCases {
            try await AppleFixtures.withStore(store, on: engine) { url, _ in
                let models = try store.versionedModel()
                let before = try await Self.bookmarks(url, model: try store.model())
                #expect(before.count == 10)
                #expect(before.contains { $0.hasPrefix("bookmarks_root ") && $0.contains("children:") })
                let plan = try await way.migrator(models: models).migrateStore(at: url)
                #expect(plan.targetVersion.name == models.current.name)
                if way.forcing == .streamed { #expect(plan.steps.allSatisfy { $0.strategy == .streamed }, "\(engine)") }
                if let forcing = way.forcing, forcing != .streamed {
                    #expect(plan.steps.allSatisfy { $0.strategy == forcing }, "\(engine): \(plan.steps.map(\.description))")
                }
                #expect(try await Self.bookmarks(url, model: models.current) == before, "\(engine)")
                // The root's children by title, as the project's README says.
                let root = try await withOpenStore(url, model: models.current) { container in
                    let context = container.newContext()
                    let root = try #require(
                        try await context.fetch(
                            FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'bookmarks_root'"))
                        ).first
                    )
                    return try await root.destinations(forKey: "children").map { $0.value(forKey: "title").stringValue ?? "-" }
                }
                #expect(root == ["1", "2", "3", "4", "5"], "\(engine)")
            }
        }
    }

    // MARK: Feedback

    /// The rows of each entity at `model`, sub-entities counted in their own.
    static func feedbackCounts(_ url: StoreURL, model: ManagedObjectModel) async throws -> [String: Int] {
        try await withOpenStore(url, model: model) { container in
            let context = container.newContext()
            var counts: [String: Int] = [:]
            for entity in model.entities {
                counts[entity.name] = try await context.fetch(FetchRequest(entityName: entity.name)).filter { $0.entity.name == entity.name }.count
            }
            return counts
        }
    }

    static let feedbackWays: [Way] = [
        Way(throughEveryVersion: true, forcing: nil), Way(throughEveryVersion: false, forcing: nil),
        Way(throughEveryVersion: false, forcing: .streamed),
    ]

    /// v1…v5 to v6 with the project's own Xcode mapping models as they are: the events, the
    /// messages (three kinds in v1…v4, one from v5 on) and their senders all kept.
    @Test(arguments: AppleFixtures.feedback.prefix(5), feedbackWays)
    func feedbackReachesTheCurrentVersionByItsMappingModels(store: AppleFixtures.Store, way: Way) async throws {
        for engine in TestEngine.allCases {
            try await AppleFixtures.withStore(store, on: engine) { url, _ in
                let models = try store.versionedModel()
                let mappings = try MappingModel.load(directory: AppleFixtures.root.appendingPathComponent("Feedback/mappings"), versions: models)
                let source = try await Self.feedbackCounts(url, model: try store.model())
                let plan = try await way.migrator(models: models, mappingModels: mappings).migrateStore(at: url)
                #expect(
                    plan.steps.count == 6 - Int(store.versionName.split(separator: " ").last.flatMap { Int($0) } ?? 1),
                    "\(plan.steps.map(\.description))"
                )
                if way.forcing == .streamed { #expect(plan.steps.allSatisfy { $0.strategy == .streamed }) }
                let migrated = try await Self.feedbackCounts(url, model: models.current)
                let messages = ["ATTextMessage", "ATAutomatedMessage", "ATFileMessage", "ATMessage"].compactMap { source[$0] }.reduce(0, +)
                #expect(migrated["ATEvent"] == source["ATEvent"], "\(engine)")
                #expect(migrated["ATMessage"] == messages, "\(engine)")
                #expect(migrated["ATMessageSender"] == source["ATMessageSender"], "\(engine)")
                #expect(migrated["ATFileAttachment"] ?? 0 >= source["ATFileAttachment"] ?? 0, "\(engine)")
            }
        }
    }

    // MARK: Cars

    static let carsWays: [Way] = [
        Way(throughEveryVersion: true, forcing: nil), Way(throughEveryVersion: false, forcing: nil),
        Way(throughEveryVersion: false, forcing: .streamed),
    ]

    /// Each car's plate → its maker, and how many cars, at the third version.
    @Test(arguments: [CarsFixtures.version1, CarsFixtures.version2], carsWays)
    func carsReachTheThirdVersionWithTheirMakers(store: CarsFixtures.Store, way: Way) async throws {
        for engine in TestEngine.allCases {
            try await CarsMigrationTests.withStore(store, on: engine) { url in
                let makers = try await CarsMigrationTests.makers(in: url)
                var policies = MigrationPolicies()
                policies.register(V2to3MakerPolicy.self, as: "V2to3MakerPolicy")
                let models = try CarsFixtures.versionedModel()
                let mappings = try MappingModel.load(directory: CarsFixtures.mappings, versions: models)
                let plan = try await way.migrator(models: models, mappingModels: mappings, policies: policies).migrateStore(
                    at: url,
                    to: "SampleModel3"
                )
                // Both ways run the project's mapping model of the second to the third version.
                #expect(
                    plan.steps.last.map { $0.source.name == "SampleModel2" && !$0.mappingModels[0].isInferred } == true,
                    "\(plan.steps.map(\.description))"
                )
                let model = try #require(models.version(named: "SampleModel3"))
                let found = try await withOpenStore(url, model: model) { container in
                    var found: [String: String] = [:]
                    let context = container.newContext()
                    for car in try await context.fetch(FetchRequest(entityName: "Car")) {
                        found[car.value(forKey: "numberPlate").stringValue ?? "?"] = try await car.destination(forKey: "createdBy")?.value(
                            forKey: "name"
                        ).stringValue
                    }
                    return found
                }
                #expect(found == makers, "\(engine)")
                #expect(makers.count == 125)
            }
        }
    }
}
