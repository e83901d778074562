import Foundation
import Testing

@testable import Persistence

/// Every store Apple's Core Data wrote in `Tests/Fixtures/CoreData`, with the model version
/// that wrote it (each project's README says which). Tests work on copies; the originals
/// are never opened.
enum AppleFixtures {
    static let root = ModelFixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/CoreData")

    /// A store file (with its `-wal` and `-shm` where it has them) and its model.
    struct Store: Sendable, CustomTestStringConvertible {
        /// The project's folder under `Tests/Fixtures/CoreData`.
        let project: String
        /// The store's path in the project's folder.
        let file: String
        /// The `.xcdatamodeld` that wrote it, in the project's folder.
        let models: String
        let versionName: String

        var url: URL { AppleFixtures.root.appendingPathComponent(project).appendingPathComponent(file) }
        var modelsURL: URL { AppleFixtures.root.appendingPathComponent(project).appendingPathComponent(models) }
        var testDescription: String { "\(project)/\(file)" }

        func versionedModel() throws -> VersionedModel { try VersionedModel(contentsOf: modelsURL) }
        func model() throws -> ManagedObjectModel { try #require(try versionedModel().version(named: versionName)) }

        /// The store's file and the log files beside it.
        var files: [URL] {
            ["", "-wal", "-shm"].map { URL(fileURLWithPath: url.path + $0) }.filter { FileManager.default.fileExists(atPath: $0.path) }
        }
    }

    static let cars = [
        Store(project: "Cars", file: "SampleModel_V1.sqlite", models: "models/SampleModel.xcdatamodeld", versionName: "SampleModel"),
        Store(project: "Cars", file: "SampleModel_V2.sqlite", models: "models/SampleModel.xcdatamodeld", versionName: "SampleModel2"),
    ]
    static let colourPosts =
        (1...3).map { number in
            Store(
                project: "ColourPosts",
                file: "CoreDataMigration_Example_\(number).sqlite",
                models: "models/CoreDataMigration_Example.xcdatamodeld",
                versionName: number == 1 ? "CoreDataMigration_Example" : "CoreDataMigration_Example \(number)"
            )
        } + [
            Store(
                project: "ColourPosts",
                file: "CoreDataMigration_Example_WAL.sqlite",
                models: "models/CoreDataMigration_Example.xcdatamodeld",
                versionName: "CoreDataMigration_Example 4"
            )
        ]
    static let bookmarks =
        (1...5).map { number in
            Store(
                project: "Bookmarks",
                file: "stores/Bookmarks_V\(number).sqlite",
                models: "BookmarksModel.xcdatamodeld",
                versionName: number == 1 ? "BookmarksModel" : "BookmarksModel \(number)"
            )
        } + [Store(project: "Bookmarks", file: "stores/SyncMetadata_V3.sqlite", models: "SyncMetadata.xcdatamodeld", versionName: "SyncMetadata 3")]
    static let cart = [Store(project: "Cart", file: "stores/CartStorage_v1.sqlite", models: "CartStorage.xcdatamodeld", versionName: "CartStorage")]
    static let contentful = [Store(project: "Contentful", file: "stores/Test.sqlite", models: "Test.xcdatamodeld", versionName: "Test")]
    static let feedback =
        (1...6).map { number in
            Store(
                project: "Feedback",
                file: "stores/ATDataModelv\(number).sqlite",
                models: "ATDataModel.xcdatamodeld",
                versionName: number == 1 ? "ATDataModel" : "ATDataModel \(number)"
            )
        }
        + [2, 3].map { number in
            Store(
                project: "Feedback",
                file: "stores/v\(number)WALDatabase/ATDataModel.sqlite",
                models: "ATDataModel.xcdatamodeld",
                versionName: "ATDataModel \(number)"
            )
        }
    /// Damaged on purpose upstream: its tables are version 2's, its entity version hashes
    /// version 3's.
    static let feedbackDamaged = Store(
        project: "Feedback",
        file: "stores/v2CorruptDatabase/ATDataModel.sqlite",
        models: "ATDataModel.xcdatamodeld",
        versionName: "ATDataModel 2"
    )

    /// Every store that opens.
    static let all = cars + colourPosts + bookmarks + cart + contentful + feedback

    /// Runs `body` with a writable copy of `store` (and its log files) in a new temporary
    /// folder, removed afterwards; the original files are expected byte for byte unchanged.
    static func withCopy<T>(
        of store: Store,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (StoreURL) async throws -> T
    ) async throws -> T {
        let before = try store.files.map { try Data(contentsOf: $0) }
        let folder = try ScenarioFolder()
        let copy = folder.url.appendingPathComponent("store.sqlite")
        for file in store.files {
            let target = URL(fileURLWithPath: copy.path + file.path.dropFirst(store.url.path.count))
            try FileManager.default.copyItem(at: file, to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        }
        let result = try await body(.sqlite(copy.path))
        #expect(try store.files.map { try Data(contentsOf: $0) } == before, "\(store.file) changed", sourceLocation: sourceLocation)
        return result
    }
}
