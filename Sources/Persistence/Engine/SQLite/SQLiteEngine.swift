import Foundation
import Logging

/// A store in a SQLite file, in Core Data's own layout: Apple's Core Data opens it, and
/// opens the framework's stores.
struct SQLiteEngine: StoreEngine {
    let url: StoreURL
    /// The file, as the URL names it.
    let path: String

    var dialect: any SQLDialect { SQLiteDialect() }
    var storeType: String { "SQLite" }
    var scheme: String { "sqlite" }
    var filePath: String? { path }
    var displayURL: String { "sqlite://\(path)" }

    func open(model: ManagedObjectModel, options: PersistentStore.Options, logger: Logger) async throws -> PersistentStore {
        try SQLiteStoreFile.checkIsRegularFile(path, store: url)
        if FileManager.default.fileExists(atPath: path) {
            let metadata = try SQLiteStoreFile.readMetadata(path: path, store: url)
            if metadata.isForeign && !model.isCompatible(with: metadata) {
                try checkStructure(fits: model)
            } else {
                try PersistentStore.check(metadata, isCompatibleWith: model, store: url)
            }
            let database =
                options.readOnly
                ? try await SQLiteDatabase.open(readingStoreAt: path)
                : try await SQLiteDatabase.open(
                    path: path,
                    mode: .readWrite,
                    readerCount: options.readerCount,
                    isDurable: options.isDurable,
                    commitsAtomically: options.commitsAtomically
                )
            let layout: StoreLayout
            do {
                layout = try await database.read { try StoreLayout.read(from: $0, model: model) }
            } catch {
                await database.close()
                throw error
            }
            // Apple's cells of externally stored attributes say where their bytes are.
            let storesExternally = metadata.isForeign && model.entities.contains { $0.attributes.contains(where: \.allowsExternalBinaryDataStorage) }
            return PersistentStore(
                url: url,
                model: model,
                database: database,
                metadata: metadata,
                layout: layout,
                logger: logger,
                defersIndexes: options.defersIndexes && !options.readOnly,
                checksModelVersion: options.checksModelVersionOnWrite,
                externalBinaryStorage: storesExternally ? ExternalBinaryStorage(storePath: path) : nil
            )
        }
        guard options.createIfMissing else {
            throw StoreError(
                .storeNotFound,
                "there is no store at \(path)",
                hint: "check the path, or create the store with the app that uses it",
                store: url.description
            )
        }
        let metadata = StoreMetadata(model: model, storeType: storeType)
        try SQLiteStoreFile.create(path: path, model: model, metadata: metadata, includingIndexes: !options.defersIndexes)
        logger.info("created store", metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(model.name)"])
        let database = try await SQLiteDatabase.open(
            path: path,
            mode: .readWrite,
            readerCount: options.readerCount,
            isDurable: options.isDurable,
            commitsAtomically: options.commitsAtomically
        )
        return PersistentStore(
            url: url,
            model: model,
            database: database,
            metadata: metadata,
            layout: nil,
            logger: logger,
            defersIndexes: options.defersIndexes,
            checksModelVersion: options.checksModelVersionOnWrite
        )
    }

    /// A store written by Apple's Core Data carries Apple's version hashes, which are not
    /// ours: it opens with `model` when its tables are the ones `model`'s schema makes.
    private func checkStructure(fits model: ManagedObjectModel) throws {
        let store = try SQLiteStoreFile.readStructure(path: path, store: url)
        let differences = store.differences(from: model.storeStructure(laidOutAs: store))
        guard differences.isEmpty else {
            throw StoreError(
                .incompatibleModel,
                "the store was written by Apple's Core Data and its tables do not fit '\(model.name)': \(differences.joined(separator: "; "))",
                hint: "migrate the store to '\(model.name)' first, or open it with the model version that wrote it",
                store: url.description
            )
        }
    }

    /// The file and its folder must be writable: SQLite writes beside the file.
    func checkWritable() throws(StoreError) {
        try SQLiteStoreFile.checkIsRegularFile(path, store: url)
        try SQLiteStoreFile.checkWritable(path, store: url)
    }

    func metadata() async throws -> StoreMetadata {
        try SQLiteStoreFile.readMetadata(path: path, store: url)
    }

    /// Read-only, leaving nothing beside the store (see ``SQLiteReadOnlyView``).
    func inspect<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try SQLiteStoreFile.checkIsRegularFile(path, store: url)
        let connection = try SQLiteConnection(readingStoreAt: path)
        return try body(connection)
    }

    func checkListable() throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.storeNotFound, "there is no store at \(path)", hint: "check the path", store: url.description)
        }
    }

    /// The file with its `-wal`, `-shm` and `-journal` files.
    func destroy(logger: Logger) async throws {
        try SQLiteStoreFile.remove(path, store: url)
    }

    func copyTarget(replace: Bool) throws(StoreError) -> any StoreCopyTarget {
        SQLiteCopyTarget(path: path, url: url, replace: replace)
    }

    var migrationDialect: (any SQLDialect)? { dialect }

    func migrationBackend() throws(MigrationError) -> any MigrationBackend {
        SQLiteMigrationBackend(store: url, path: path)
    }

    /// The source file, attached read-only to the destination's writer as `src`.
    ///
    /// Immutable (no locks, no files) when every committed page is in the file; with a log,
    /// read-only in place, so that the rows still only in the log are read too and the
    /// writer's transactions never ask for the store's write lock, which the migration
    /// holds on a connection of its own.
    func sourceAccess(reading source: StoreURL) -> SourceAccess? {
        guard let source = source.engine as? SQLiteEngine else { return nil }
        let attachment =
            FileManager.default.fileExists(atPath: source.path + "-wal")
            ? SQLiteReadOnlyView.readOnlyURI(for: source.path) : SQLiteReadOnlyView.immutableURI(for: source.path)
        return SourceAccess(schema: "src", attach: "ATTACH DATABASE \(attachment) AS src", detach: "DETACH DATABASE src")
    }

    func appleStoreStructure() throws -> StoreStructure? {
        try SQLiteStoreFile.readStructure(path: path, store: url)
    }

    func storeLayout(model: ManagedObjectModel) async throws -> StoreLayout? {
        try await inspect { try StoreLayout.read(from: $0, model: model, forMigration: true) }
    }
}
