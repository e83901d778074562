import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@testable import Persistence

@Suite("A shipped version edited after it shipped")
struct VersionLockTests {
    /// A copy of the project's `Migrations` folder (models, lock, mapping files) with one
    /// version's file edited, as a developer might edit it after it shipped.
    static func editedMigrations(version: String, replacing old: String, with new: String) throws -> (URL, @Sendable () -> Void) {
        let (folder, cleanUp) = temporaryDirectory()
        let migrations = folder.appendingPathComponent("Migrations")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Migrations"), to: migrations)
        let file = migrations.appendingPathComponent("BookStore.xcdatamodeld/\(version).xcdatamodel/contents")
        let text = try String(contentsOf: file, encoding: .utf8)
        let edited = text.replacingOccurrences(of: old, with: new)
        try #require(edited != text)
        try Data(edited.utf8).write(to: file)
        return (migrations, cleanUp)
    }

    @Test(arguments: TestEngine.allCases)
    func aStoreThatVersionWroteIsRefusedNamingTheVersionAndTheChange(engine: TestEngine) async throws {
        let (migrations, cleanUp) = try Self.editedMigrations(
            version: "BookStore 4",
            replacing: #"name="price" attributeType="Float""#,
            with: #"name="price" attributeType="Double""#
        )
        defer { cleanUp() }
        let edited = try BookStoreModels.load(from: migrations)
        try await engine.withStoreURL { url in
            _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger)
                .seed(url, version: 4, count: 3, catalogue: try loadCatalogue())
            let before = try await StoreSnapshot(url)
            let error = await #expect(throws: MigrationError.self) {
                try await StoreAdministration(models: edited, logger: quietLogger).migrate(url)
            }
            #expect(error?.code == .unknownStoreVersion)
            #expect(
                error?.message
                    == "the store was written by 'BookStore 4' as it shipped; the model file for 'BookStore 4' has changed since: Publication.price: type Float → Double",
                "\(String(describing: error))"
            )
            #expect(error?.hint?.contains("make the change in a new model version") == true)
            try await expectUnchanged(url, since: before)

            // What a user meets at launch: `bookstore migrate` with the edited files.
            var command = BuiltCommand("bookstore", unsetEnvironment: ["BOOKSTORE_STORE", "BOOKSTORE_MIGRATION_STORE"])
            command.environment["BOOKSTORE_RESOURCES"] = migrations.deletingLastPathComponent().path
            let launch = try await command.run(["migrate", "--store", url.description])
            #expect(launch.status != 0)
            #expect(
                launch.stderr.contains(
                    "the store was written by 'BookStore 4' as it shipped; the model file for 'BookStore 4' has changed since: Publication.price: type Float → Double."
                ),
                "\(launch.stderr)"
            )
            try await expectUnchanged(url, since: before)

            // The models as they shipped migrate it.
            _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger).migrate(url)
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 5")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func noStoreIsMadeOfAVersionThatChangedAndOthersStillAre(engine: TestEngine) async throws {
        let (migrations, cleanUp) = try Self.editedMigrations(
            version: "BookStore 4",
            replacing: #"name="price" attributeType="Float""#,
            with: #"name="price" attributeType="Double""#
        )
        defer { cleanUp() }
        let administration = StoreAdministration(models: try BookStoreModels.load(from: migrations), logger: quietLogger)
        try await engine.withStoreURL { url in
            let error = await #expect(throws: BookStoreError.self) {
                try await administration.seed(url, version: 4, count: 3, catalogue: try loadCatalogue())
            }
            #expect(
                error?.message == "cannot make a store of 'BookStore 4' changed since it was locked: Publication.price: type Float → Double",
                "\(String(describing: error))"
            )
            let missing = await #expect(throws: StoreError.self, "nothing was written") { try await PersistentStore.metadata(at: url) }
            #expect(missing?.code == .storeNotFound)
        }
        try await engine.withStoreURL { url in
            let seeded = try await administration.seed(url, version: 5, count: 3, catalogue: try loadCatalogue())
            #expect(seeded.books == 7)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func noStoreIsMigratedThroughAVersionThatChanged(engine: TestEngine) async throws {
        let (migrations, cleanUp) = try Self.editedMigrations(
            version: "BookStore 4",
            replacing: #"name="title" attributeType="String""#,
            with: #"name="title" optional="YES" attributeType="String""#
        )
        defer { cleanUp() }
        let edited = try BookStoreModels.load(from: migrations)
        try await engine.withStoreURL { url in
            _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger)
                .seed(url, version: 3, count: 3, catalogue: try loadCatalogue())
            let before = try await StoreSnapshot(url)
            let error = await #expect(throws: MigrationError.self) {
                try await StoreAdministration(models: edited, logger: quietLogger).migrate(url)
            }
            #expect(error?.code == .lockedVersionChanged)
            #expect(
                error?.message == "the model's version lock says 'BookStore 4' changed since it was locked: Publication.title: required → optional",
                "\(String(describing: error))"
            )
            try await expectUnchanged(url, since: before)
        }
    }
}
