import Foundation
import Logging
import Persistence

/// The store chores behind `bookstore seed`, `status` and `reset`.
public struct StoreAdministration: Sendable {
    /// What `status` reports.
    public struct Status: Sendable {
        public var store: StoreURL
        public var storeModel: ManagedObjectModel
        public var currentModel: ManagedObjectModel
        public var isCompatible: Bool
        public var metadata: StoreMetadata
    }

    public let models: BookStoreModels
    let logger: Logger

    public init(models: BookStoreModels, logger: Logger) {
        self.models = models
        self.logger = logger
    }

    /// The store's model version and whether the app can open it as it is.
    ///
    /// - Throws: ``StoreError`` when the store is missing or not a store; ``BookStoreError``
    ///   when its model is none of BookStore's versions. The store is only read.
    public func status(of url: StoreURL) async throws -> Status {
        let metadata = try await PersistentStore.metadata(at: url)
        guard let model = models.versions.version(matching: metadata) else {
            let written = metadata.modelVersionName.map { " (it says it was written by '\($0)')" } ?? ""
            throw BookStoreError("the store \(url) matches none of BookStore's model versions\(written)",
                                 hint: "it may come from a newer release of the app, or from another app; it was left untouched")
        }
        return Status(store: url, storeModel: model, currentModel: models.current,
                      isCompatible: models.current.isCompatible(with: metadata), metadata: metadata)
    }

    /// Creates a store at `version` holding the catalogue and `count` generated books.
    ///
    /// - Throws: when a store already exists at `url`; nothing is changed then.
    public func seed(_ url: StoreURL, version: Int, count: Int, catalogue: Catalogue) async throws -> Seeder.Summary {
        if case .sqlite(let path) = url.kind, FileManager.default.fileExists(atPath: path) {
            throw BookStoreError("a store already exists at \(path)",
                                 hint: "use `bookstore reset --yes --model-version \(version) --seed` to replace it")
        }
        let model = try models.model(version: version)
        let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
        return try await Seeder(catalogue: catalogue, logger: logger).seed(container, version: version, generatedCount: count)
    }

    /// Removes the store and creates an empty one at `version`, seeded if asked.
    public func reset(_ url: StoreURL, version: Int, seed catalogue: Catalogue?) async throws -> Seeder.Summary? {
        let model = try models.model(version: version)
        if case .sqlite(let path) = url.kind {
            for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.removeItem(atPath: path + suffix)
            }
        }
        let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
        guard let catalogue else { return nil }
        return try await Seeder(catalogue: catalogue, logger: logger).seed(container, version: version)
    }
}
