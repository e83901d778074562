import Foundation
import Logging
import Synchronization

/// An open store: a database holding one model version's data in Core Data's layout.
///
/// Open one with ``PersistentContainer``, or directly:
///
/// ```swift
/// let store = try await PersistentStore.open(.sqlite("bookstore.sqlite"), model: model,
///                                            options: .createIfMissing, logger: logger)
/// ```
public final class PersistentStore: Sendable {
    /// How to open a store.
    public struct Options: Sendable, Hashable {
        /// Create an empty store for the model when there is none.
        public var createIfMissing: Bool
        /// Reader connections beside the writer (on PostgreSQL opened as reads need them).
        public var readerCount: Int
        /// Open without writing anything, not even WAL files: a migration's source. Saves fail.
        public var readOnly: Bool
        /// Whether a commit waits until it is on disk. `false` only for a store being built
        /// and thrown away if anything fails, as a migration's work file or shadow schema:
        /// SQLite then keeps no journal and never syncs (the migration syncs the finished
        /// file once; a failed transaction is not rolled back, the file is discarded),
        /// PostgreSQL commits without waiting for its WAL (`synchronous_commit = off`).
        public var isDurable: Bool
        /// Whether the secondary indexes (on foreign keys, `Z_ENT`, join destinations) wait
        /// until they are needed: a store created with this option has none, so bulk writes
        /// into it skip their upkeep. They are built at once, in one pass per index, by
        /// ``PersistentStore/buildDeferredIndexes()`` or by the first fetch or to-many fault
        /// that may look rows up by them.
        public var defersIndexes: Bool

        public init(createIfMissing: Bool = false, readerCount: Int = 2, readOnly: Bool = false, isDurable: Bool = true, defersIndexes: Bool = false) {
            self.createIfMissing = createIfMissing
            self.readerCount = readerCount
            self.readOnly = readOnly
            self.isDurable = isDurable
            self.defersIndexes = defersIndexes
        }

        /// A migration's workspace: created if missing, one connection (reads see the
        /// batches just written), commits not synced, indexes built after the bulk writes.
        public static let workspace = Options(createIfMissing: true, readerCount: 0, isDurable: false, defersIndexes: true)

        public static let createIfMissing = Options(createIfMissing: true)
        public static let existingOnly = Options(createIfMissing: false)
        public static let readOnly = Options(createIfMissing: false, readerCount: 0, readOnly: true)
    }

    public let url: StoreURL
    public let model: ManagedObjectModel
    public let schema: StoreSchema
    public let database: any Database
    public let metadata: StoreMetadata
    let logger: Logger

    /// Each entity's properties and columns, worked out once for every context of the store.
    let layouts: [String: EntityLayout]
    /// Where each entity's properties are in a row of a ``SelectQuery`` on its table (the
    /// same for every entity of a hierarchy, whose tables have the same columns).
    let rowLayouts: [String: EntityLayout.RowLayout]
    /// Whether secondary indexes may be missing (``Options/defersIndexes``).
    private let indexesDeferred: Mutex<Bool>

    /// A store open on `database`, its entities numbered by `numbering`: the store's own
    /// (``EntityNumbering/read(from:model:)``), or `nil` for a store just created.
    init(url: StoreURL, model: ManagedObjectModel, database: any Database, metadata: StoreMetadata, numbering: EntityNumbering?, logger: Logger,
         defersIndexes: Bool = false) {
        self.url = url
        self.indexesDeferred = Mutex(defersIndexes)
        self.model = model
        let schema = StoreSchema(model: model, dialect: database.dialect, numbering: numbering)
        self.schema = schema
        self.database = database
        self.metadata = metadata
        self.logger = logger
        var layouts: [String: EntityLayout] = [:]
        for entity in model.entities {
            layouts[entity.name] = EntityLayout(entity: entity, schema: schema)
        }
        self.layouts = layouts
        self.rowLayouts = layouts.mapValues { layout in
            layout.rowLayout(for: SelectQuery(table: layout.table, schema: schema), layouts: layouts)
        }
    }

    /// Opens the store at `url` for `model`.
    ///
    /// - Throws: ``StoreError`` when the store is missing (and `createIfMissing` is off), is
    ///   not a store, or was written by another model version (``StoreError/Code/incompatibleModel``).
    ///   The store is not changed in any of these cases.
    public static func open(_ url: StoreURL, model: ManagedObjectModel, options: Options = .existingOnly, logger: Logger) async throws -> PersistentStore {
        switch url.kind {
        case .sqlite(let path):
            return try await openSQLite(url: url, path: path, model: model, options: options, logger: logger)
        case .memory(let name):
            let path = name.isEmpty ? ":memory:" : "file:\(name)?mode=memory&cache=shared"
            let database = try await SQLiteDatabase.open(path: path, mode: .readWriteCreate, readerCount: 0)
            let existing: StoreMetadata?
            do {
                existing = try await database.read { try StoreMetadata.read(from: $0) }
            } catch var error as StoreError where error.store == nil {
                error.store = url.description
                throw error
            }
            if let existing {
                try check(existing, isCompatibleWith: model, store: url)
                let numbering = try await database.read { try EntityNumbering.read(from: $0, model: model) }
                return PersistentStore(url: url, model: model, database: database, metadata: existing, numbering: numbering, logger: logger)
            }
            let metadata = StoreMetadata(model: model, storeType: url.storeType)
            try await database.write { try StoreCreation.create(model: model, metadata: metadata, on: $0) }
            return PersistentStore(url: url, model: model, database: database, metadata: metadata, numbering: nil, logger: logger)
        case .postgres(let configuration):
            return try await openPostgres(url: url, configuration: configuration, model: model, options: options, logger: logger)
        }
    }

    /// Builds the secondary indexes that ``Options/defersIndexes`` left out; nothing when
    /// they exist. Fetches and to-many faults call it before looking rows up by a foreign
    /// key, so a store with deferred indexes never answers them by scanning a table per row.
    ///
    /// ```swift
    /// let store = try await PersistentStore.open(url, model: model, options: .workspace, logger: logger)
    /// // … bulk inserts …
    /// try await store.buildDeferredIndexes()
    /// ```
    public func buildDeferredIndexes() async throws {
        guard indexesDeferred.withLock({ $0 }) else { return }
        let schema = self.schema
        let statements = schema.indexStatements()
        try await database.write { connection in
            try schema.explainingUniqueIndexes(on: connection) {
                for statement in statements { try connection.execute(statement) }
            }
        }
        indexesDeferred.withLock { $0 = false }
    }

    /// Closes the store's connections now; the store cannot be used afterwards.
    public func close() async {
        await database.close()
    }

    /// Checks, without opening it, that this process could write the store at `url`: a
    /// SQLite store's file and folder must be writable (SQLite writes beside the file). A
    /// PostgreSQL store's rights show when it is written.
    ///
    /// ```swift
    /// try PersistentStore.checkWritable(url)   // before a server starts listening
    /// ```
    ///
    /// - Throws: ``StoreError/Code/notWritable`` naming the file or folder and the reason;
    ///   ``StoreError/Code/notAStore`` when the path is not a regular file.
    public static func checkWritable(_ url: StoreURL) throws(StoreError) {
        guard case .sqlite(let path) = url.kind else { return }
        try SQLiteStoreFile.checkIsRegularFile(path, store: url)
        try SQLiteStoreFile.checkWritable(path, store: url)
    }

    /// Reads the metadata without opening the store for writing.
    public static func metadata(at url: StoreURL) async throws -> StoreMetadata {
        switch url.kind {
        case .sqlite(let path):
            return try SQLiteStoreFile.readMetadata(path: path, store: url)
        case .memory:
            throw StoreError(.storeNotFound, "an in-memory store has no metadata until it is opened", store: url.description)
        case .postgres(let configuration):
            return try await readPostgresMetadata(url: url, configuration: configuration)
        }
    }

    static func check(_ metadata: StoreMetadata, isCompatibleWith model: ManagedObjectModel, store: StoreURL) throws(StoreError) {
        guard model.isCompatible(with: metadata) else {
            let written = metadata.modelVersionName.map { "model version '\($0)'" } ?? "another model version"
            throw StoreError(
                .incompatibleModel,
                "the store was written by \(written), not by '\(model.name)'",
                hint: "migrate the store to '\(model.name)' first, or open it with the model that wrote it",
                store: store.description
            )
        }
    }

    /// A store written by Apple's Core Data carries Apple's version hashes, which are not
    /// ours: it opens with `model` when its tables are the ones `model`'s schema makes.
    private static func checkStructure(of path: String, fits model: ManagedObjectModel, store: StoreURL) throws {
        try model.checkReadableInAppleStore(store)
        let differences = try SQLiteStoreFile.readStructure(path: path, store: store).differences(from: model.storeStructure)
        guard differences.isEmpty else {
            throw StoreError(
                .incompatibleModel,
                "the store was written by Apple's Core Data and its tables do not fit '\(model.name)': \(differences.joined(separator: "; "))",
                hint: "migrate the store to '\(model.name)' first, or open it with the model version that wrote it",
                store: store.description
            )
        }
    }

    private static func openSQLite(url: StoreURL, path: String, model: ManagedObjectModel, options: Options, logger: Logger) async throws -> PersistentStore {
        try SQLiteStoreFile.checkIsRegularFile(path, store: url)
        if FileManager.default.fileExists(atPath: path) {
            let metadata = try SQLiteStoreFile.readMetadata(path: path, store: url)
            if metadata.isForeign && !model.isCompatible(with: metadata) {
                try checkStructure(of: path, fits: model, store: url)
            } else {
                try check(metadata, isCompatibleWith: model, store: url)
            }
            let database = options.readOnly
                ? try await SQLiteDatabase.open(readingStoreAt: path)
                : try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: options.readerCount, isDurable: options.isDurable)
            let numbering: EntityNumbering
            do {
                numbering = try await database.read { try EntityNumbering.read(from: $0, model: model) }
            } catch {
                await database.close()
                throw error
            }
            return PersistentStore(url: url, model: model, database: database, metadata: metadata, numbering: numbering, logger: logger,
                                   defersIndexes: options.defersIndexes && !options.readOnly)
        }
        guard options.createIfMissing else {
            throw StoreError(.storeNotFound, "there is no store at \(path)", hint: "check the path, or create the store (e.g. `bookstore seed`)", store: url.description)
        }
        let metadata = StoreMetadata(model: model, storeType: url.storeType)
        try SQLiteStoreFile.create(path: path, model: model, metadata: metadata, includingIndexes: !options.defersIndexes)
        logger.info("created store", metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(model.name)"])
        let database = try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: options.readerCount, isDurable: options.isDurable)
        return PersistentStore(url: url, model: model, database: database, metadata: metadata, numbering: nil, logger: logger, defersIndexes: options.defersIndexes)
    }
}
