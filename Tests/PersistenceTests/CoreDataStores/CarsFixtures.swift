import Foundation
import Testing

@testable import Persistence

/// The stores Apple's Core Data wrote for a model with entity inheritance and uniqueness
/// constraints (`Tests/Fixtures/CoreData/Cars`, whose README has the facts): copied before
/// use, the originals never opened.
enum CarsFixtures {
    static let folder = ModelFixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/CoreData/Cars")
    static let models = folder.appendingPathComponent("models/SampleModel.xcdatamodeld")
    static let mappings = folder.appendingPathComponent("mappings")

    /// A store and the version that wrote it.
    struct Store: Sendable, CustomTestStringConvertible {
        let file: String
        let versionName: String
        var url: URL { CarsFixtures.folder.appendingPathComponent(file) }
        var testDescription: String { file }
    }

    static let version1 = Store(file: "SampleModel_V1.sqlite", versionName: "SampleModel")
    static let version2 = Store(file: "SampleModel_V2.sqlite", versionName: "SampleModel2")

    static func versionedModel() throws -> VersionedModel { try VersionedModel(contentsOf: models) }

    /// Runs `body` with a writable copy of `store` in a new temporary folder, removed
    /// afterwards; the original is expected unchanged.
    static func withCopy<T>(
        of store: Store,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (StoreURL) async throws -> T
    ) async throws -> T {
        let before = try Data(contentsOf: store.url)
        let folder = try ScenarioFolder()
        let copy = folder.url.appendingPathComponent("store.sqlite")
        try FileManager.default.copyItem(at: store.url, to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
        let result = try await body(.sqlite(copy.path))
        #expect(try Data(contentsOf: store.url) == before, "\(store.file) changed", sourceLocation: sourceLocation)
        return result
    }
}
