import Foundation
import Logging
import Persistence

/// The store chores behind `bookstore seed`, `status`, `migrate` and `reset`.
public struct StoreAdministration: Sendable {
    /// What `status` reports.
    public struct Status: Sendable {
        /// The store looked at.
        public var store: StoreURL
        /// The model version that wrote the store.
        public var storeModel: ManagedObjectModel
        /// The model version this release serves (`BookStore 5`).
        public var currentModel: ManagedObjectModel
        /// Whether the store is at the current version and needs no migration.
        public var isCompatible: Bool
        /// The store's metadata as read.
        public var metadata: StoreMetadata
        /// The migration steps that would bring the store to the current version.
        public var pendingSteps: [MigrationPlan.Step]
    }

    /// BookStore's model versions and mapping models.
    public let models: BookStoreModels
    let logger: Logger

    /// Chores on stores of `models`, logging to `logger`.
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
        let migrator = try BookStoreMigration.migrator(models: models, logger: logger)
        let model = try migrator.recognisedVersion(of: metadata, store: url).model
        // Planned from the store itself: its layout decides how each step can run.
        let plan = try await migrator.plan(forStoreAt: url, storeVersion: model.name)
        return Status(
            store: url,
            storeModel: model,
            currentModel: models.current,
            isCompatible: model.name == models.current.name,
            metadata: metadata,
            pendingSteps: plan.steps
        )
    }

    /// The migration steps from the store's version to `target` (the current version by
    /// default). Only reads the store.
    public func migrationPlan(for url: StoreURL, to target: String? = nil) async throws -> MigrationPlan {
        try await BookStoreMigration.migrator(models: models, logger: logger).plan(forStoreAt: url, to: target)
    }

    /// Migrates the store to `target` (the current version by default), calling `progress`
    /// with each report; returns the plan it ran (empty when the store was current).
    ///
    /// `online`: while other processes keep writing the store at its version, held off only
    /// for the cut-over (PostgreSQL; see ``ProgressiveMigrator/migrateStoreOnline(at:to:storeVersion:options:progress:)``),
    /// forward only. `acceptingDataLoss`: a `target` before the store's version takes it
    /// back, dropping what later versions added only when this is `true`
    /// (``ProgressiveMigrator/migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``).
    public func migrate(
        _ url: StoreURL,
        to target: String? = nil,
        online: OnlineMigrationOptions? = nil,
        acceptingDataLoss: Bool = false,
        progress: @escaping @Sendable (MigrationProgress) -> Void = { _ in }
    ) async throws -> MigrationPlan {
        let migrator = try BookStoreMigration.migrator(models: models, logger: logger)
        if let online {
            return try await migrator.migrateStoreOnline(at: url, to: target, options: online, progress: progress)
        }
        return try await migrator.migrateStore(at: url, to: target, acceptingDataLoss: acceptingDataLoss, progress: progress)
    }

    /// A model version named by number (`3`) or name (`BookStore 3`).
    public func versionName(_ text: String) throws -> String {
        if let number = Int(text) { return try models.model(version: number).name }
        guard models.versions.version(named: text) != nil else {
            throw BookStoreError(
                "there is no model version '\(text)'",
                hint: "name one of \(models.versions.versions.map(\.name).joined(separator: ", ")), or its number"
            )
        }
        return text
    }

    /// The model of `version`, unless it is locked and its file changed since
    /// (``VersionedModel/lockChanges``): a store made with it would match no version as it
    /// shipped.
    private func shippedModel(version: Int) throws -> ManagedObjectModel {
        let model = try models.model(version: version)
        if let change = models.versions.lockChanges.first(where: { $0.version == model.name }) {
            throw BookStoreError(
                "cannot make a store of \(change)",
                hint: "restore '\(model.name)' as it shipped (version control has it), or make the change in a new model version; nothing was written"
            )
        }
        return model
    }

    /// Creates a store at `version` holding the catalogue and `count` generated books.
    ///
    /// - Throws: when a store already exists at `url`, or `version` is locked and its file
    ///   changed since (see ``BookStoreModels``' version lock); nothing is changed then.
    public func seed(_ url: StoreURL, version: Int, count: Int, catalogue: Catalogue) async throws -> Seeder.Summary {
        // A file that is there, store or not, is not overwritten; elsewhere a store is one
        // whose metadata reads.
        let exists =
            if let path = url.filePath { FileManager.default.fileExists(atPath: path) } else { (try? await PersistentStore.metadata(at: url)) != nil }
        if exists {
            throw BookStoreError(
                "a store already exists at \(url)",
                hint:
                    "use `bookstore reset --yes --model-version \(version) --seed` to replace it, or seed another store (a new file, or a schema: ?schema=NAME)"
            )
        }
        let model = try shippedModel(version: version)
        let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
        return try await Self.seeding(container) {
            try await Seeder(catalogue: catalogue, logger: logger).seed($0, version: version, generatedCount: count)
        }
    }

    /// Runs `seed` on the container, then closes its store whether or not it succeeded: the
    /// caller gets the store back closed (on SQLite, its write-ahead log folded into the
    /// file), not closing behind its back when the container is released.
    private static func seeding(
        _ container: PersistentContainer,
        _ seed: (PersistentContainer) async throws -> Seeder.Summary
    ) async throws -> Seeder.Summary {
        do {
            let summary = try await seed(container)
            await container.store.close()
            return summary
        } catch {
            await container.store.close()
            throw error
        }
    }

    /// Removes the store and creates an empty one at `version`, seeded if asked.
    public func reset(_ url: StoreURL, version: Int, seed catalogue: Catalogue?) async throws -> Seeder.Summary? {
        let model = try shippedModel(version: version)
        try await PersistentStore.destroy(at: url, logger: logger)
        let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
        guard let catalogue else {
            await container.store.close()
            return nil
        }
        return try await Self.seeding(container) { try await Seeder(catalogue: catalogue, logger: logger).seed($0, version: version) }
    }
}
