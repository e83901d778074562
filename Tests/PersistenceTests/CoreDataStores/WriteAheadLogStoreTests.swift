import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A store Apple's Core Data left with its rows still in the write-ahead log, handed over
/// as its two files (`…_WAL.sqlite` and `…_WAL.sqlite-wal`): 84 posts and 84 colours that
/// only reading the log shows.
@Suite struct WriteAheadLogStoreTests {
    static let posts = 84
    static let file = CoreDataFixtures.folder.appendingPathComponent("CoreDataMigration_Example_WAL.sqlite")

    /// The example's versions and a fifth that gives `Post` a `title`: a step to migrate by.
    static func versions() throws -> VersionedModel {
        let models = try CoreDataFixtures.models()
        let v4 = try #require(models.version(named: "CoreDataMigration_Example 4"))
        var entities = v4.entities
        let post = try #require(entities.firstIndex { $0.name == "Post" })
        entities[post].attributes.append(AttributeDescription(name: "title", type: .string))
        let v5 = try ManagedObjectModel(name: "CoreDataMigration_Example 5", entities: entities)
        return try VersionedModel(name: models.name, versions: models.versions + [v5], currentVersionName: v5.name)
    }

    /// Runs `body` with a copy of the store and its log in a folder of their own, and expects
    /// the fixture files unchanged afterwards.
    func withCopy(_ body: (StoreURL, URL) async throws -> Void) async throws {
        let before = try CoreDataFixtures.contents()
        let folder = try ScenarioFolder()
        let copy = folder.url.appendingPathComponent("store.sqlite")
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: Self.file.path + suffix, toPath: copy.path + suffix)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path + suffix)
        }
        try await body(.sqlite(copy.path), folder.url)
        #expect(try CoreDataFixtures.contents() == before, "a fixture file changed")
    }

    /// The names and bytes of the files in a folder.
    func files(in folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            result[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return result
    }

    @Test func theMainFileAloneShowsAnOlderStateThanTheLog() async throws {
        // What reading the file without its log gives: none of the 84 posts.
        let connection = try SQLiteConnection(path: SQLiteReadOnlyView.immutableURI(for: Self.file.path), mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM ZPOST")?.int64 != Int64(Self.posts))
    }

    @Test func aReadOnlyLookSeesEveryRowAndWritesNothingBesideTheStore() async throws {
        try await withCopy { url, folder in
            let before = try files(in: folder)
            let metadata = try await PersistentStore.metadata(at: url)
            #expect(metadata.isForeign)
            let counted = try await PersistentStore.inspect(url) { connection in
                try [connection.scalar("SELECT count(*) FROM ZPOST")?.int64, connection.scalar("SELECT count(*) FROM ZCOLOR")?.int64]
            }
            #expect(counted == [Int64(Self.posts), Int64(Self.posts)])
            let models = try Self.versions()
            let v4 = try #require(models.version(named: "CoreDataMigration_Example 4"))
            let container = try await PersistentContainer.open(model: v4, store: url, options: .readOnly, logger: testLogger)
            #expect(try await Scenario.count("Post", in: container.newContext()) == Self.posts)
            await container.store.close()

            let output = try await persistenceCommand.run(["inspect", "--store", url.description, "--models", ModelFixtures.colourPosts.path])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout.contains("Post                 84 rows"), "\(output.stdout)")
            #expect(try files(in: folder) == before, "the look wrote beside the store")
        }
    }

    @Test func theStoreOpensWithEveryRow() async throws {
        try await withCopy { url, _ in
            let v4 = try #require(try Self.versions().version(named: "CoreDataMigration_Example 4"))
            try await withOpenStore(url, model: v4) { (container: PersistentContainer) async throws in
                let context = container.newContext()
                #expect(try await Scenario.count("Post", in: context) == Self.posts)
                #expect(try await Scenario.count("Color", in: context) == Self.posts)
                #expect(try await Scenario.count("Post", in: context, where: "color == nil") == 0)
            }
        }
    }

    /// Migrated in place on SQLite, and copied to PostgreSQL and migrated there.
    @Test(arguments: TestEngine.allCases)
    func theStoreMigratesWithEveryRow(engine: TestEngine) async throws {
        let models = try Self.versions()
        try await withCopy { copy, _ in
            try await engine.withStoreURL { url in
                switch engine {
                case .sqlite:
                    for suffix in ["", "-wal"] {
                        try FileManager.default.copyItem(atPath: try #require(copy.filePath) + suffix, toPath: try #require(url.filePath) + suffix)
                    }
                case .postgres:
                    let summary = try await StoreCopy.copy(from: copy, to: url, versions: models, logger: testLogger)
                    #expect(summary.rows["ZPOST"] == Self.posts)
                }
                let result = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).migrateStore(at: url)
                #expect(result.steps.map(\.destination.name) == ["CoreDataMigration_Example 5"])
                try await expectNoLeftovers(url)
                let v5 = try #require(models.version(named: "CoreDataMigration_Example 5"))
                try await withOpenStore(url, model: v5) { (container: PersistentContainer) async throws in
                    let context = container.newContext()
                    #expect(try await Scenario.count("Post", in: context) == Self.posts)
                    #expect(try await Scenario.count("Color", in: context) == Self.posts)
                    #expect(try await Scenario.count("Post", in: context, where: "color == nil") == 0)
                }
            }
        }
    }
}
