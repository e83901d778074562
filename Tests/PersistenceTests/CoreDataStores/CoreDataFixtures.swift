import Foundation
import Testing

@testable import Persistence

/// The stores Apple's Core Data wrote for the "Progressive Core Data Migrations" example
/// (`Tests/Fixtures/CoreData/ColourPosts`), and copies of them to work on: the originals
/// are never opened, only copied and, at the end of a test, compared with what they were.
enum CoreDataFixtures {
    static let folder = ModelFixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/CoreData/ColourPosts")
    static let mappings = folder.appendingPathComponent("Mappings")
    /// The project's own mapping models, as Xcode saved them.
    static let xcodeMappings = folder.appendingPathComponent("XcodeMappings")

    /// The example's versions, in chain order.
    static let versionNames = [
        "CoreDataMigration_Example", "CoreDataMigration_Example 2", "CoreDataMigration_Example 3", "CoreDataMigration_Example 4",
    ]

    /// What each store holds, from the fixture's README.
    struct Store: Sendable, CustomTestStringConvertible {
        let number: Int
        let posts: Int
        var file: URL { CoreDataFixtures.folder.appendingPathComponent("CoreDataMigration_Example_\(number).sqlite") }
        var versionName: String { CoreDataFixtures.versionNames[number - 1] }
        var testDescription: String { "store \(number)" }
    }

    static let stores = [Store(number: 1, posts: 1001), Store(number: 2, posts: 5979), Store(number: 3, posts: 7995)]

    static func models() throws -> VersionedModel { try VersionedModel(contentsOf: ModelFixtures.colourPosts) }

    /// The chain 1 → 2 → 3 → 4 with the example's mapping files (ours in JSON, or the
    /// project's `.xcmappingmodel` folders) and its policy, registered under the name each names.
    static func chain(mappings: URL = mappings) throws -> MigrationChain {
        let models = try models()
        var policies = MigrationPolicies()
        policies.register(ColorFromPostMigrationPolicy.self)
        policies.register(ColorFromPostMigrationPolicy.self, as: "Post2ToPost3MigrationPolicy")
        return MigrationChain(models: models, mappingModels: try MappingModel.load(directory: mappings, versions: models), policies: policies)
    }

    /// The bytes of every fixture file (under 2 MB in all), to show the originals were not touched.
    static func contents() throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])!
        for case let url as URL in enumerator where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            result[url.path] = try Data(contentsOf: url)
        }
        return result
    }

    /// Runs `body` with a copy of the store in a new temporary folder (removed afterwards),
    /// and expects the fixture files to be byte for byte what they were before.
    static func withCopy<T>(
        of store: Store,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (StoreURL) async throws -> T
    ) async throws -> T {
        let before = try contents()
        let folder = try ScenarioFolder()
        let copy = folder.url.appendingPathComponent("store.sqlite")
        try FileManager.default.copyItem(at: store.file, to: copy)
        // Copies keep the fixture's read-only permissions on some checkouts; a store must be writable.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
        let result = try await body(.sqlite(copy.path))
        #expect(try contents() == before, "a fixture file changed", sourceLocation: sourceLocation)
        #expect(!before.isEmpty, sourceLocation: sourceLocation)
        return result
    }

    static func date(_ value: AttributeValue) -> Date? {
        if case .date(let date) = value { date } else { nil }
    }
}

extension StoreURL {
    /// The file of a SQLite store.
    var filePath: String? {
        if case .sqlite(let path) = kind { path } else { nil }
    }
}
