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
        /// With `isDurable` false: whether each transaction is still all or nothing when the
        /// process is killed. SQLite then keeps a rollback journal (without syncs, so a
        /// crash of the machine may still damage the file): a migration step's output that a
        /// later run may continue from its last batch. A rollback journal rather than a WAL,
        /// because a bulk insert into a new file appends pages, which the journal does not
        /// copy, while a WAL writes every page twice (measured by the benchmark: the fused
        /// pass at 1 M books a tenth slower with a WAL). PostgreSQL's commits always are.
        public var commitsAtomically: Bool = false
        /// Whether the secondary indexes (on foreign keys, `Z_ENT`, join destinations) wait
        /// until they are needed: a store created with this option has none, so bulk writes
        /// into it skip their upkeep. They are built at once, in one pass per index, by
        /// ``PersistentStore/buildDeferredIndexes()`` or by the first fetch or to-many fault
        /// that may look rows up by them.
        public var defersIndexes: Bool

        /// Options with each choice given; the defaults open an existing store, durable, with two readers.
        public init(createIfMissing: Bool = false, readerCount: Int = 2, readOnly: Bool = false, isDurable: Bool = true, defersIndexes: Bool = false)
        {
            self.createIfMissing = createIfMissing
            self.readerCount = readerCount
            self.readOnly = readOnly
            self.isDurable = isDurable
            self.defersIndexes = defersIndexes
        }

        /// Whether each save first checks that the store still has this process's model
        /// version (``StoreError/Code/migratedSinceOpened`` when another process migrated it):
        /// every store an application writes; not a migration's workspace, which nothing else
        /// migrates, nor a read-only store.
        var checksModelVersionOnWrite: Bool { isDurable && !readOnly }

        /// A migration's workspace: created if missing, one connection (reads see the
        /// batches just written), commits not synced, indexes built after the bulk writes.
        public static let workspace = Options(createIfMissing: true, readerCount: 0, isDurable: false, defersIndexes: true)

        /// Open the store, or create an empty one for the model when there is none.
        public static let createIfMissing = Options(createIfMissing: true)
        /// Open the store only if it exists: ``StoreError/Code/storeNotFound`` otherwise.
        public static let existingOnly = Options(createIfMissing: false)
        /// Open an existing store without writing anything to it: a migration's source, an inspection.
        public static let readOnly = Options(createIfMissing: false, readerCount: 0, readOnly: true)
    }

    /// Where the store is.
    public let url: StoreURL
    /// The model version the store holds and was opened with.
    public let model: ManagedObjectModel
    /// The store's tables and columns for ``model``, in Core Data's Z-table layout.
    public let schema: StoreSchema
    /// The store's database, for SQL of your own: a statement that fails because the store was
    /// migrated since it was opened says so (``StoreError/Code/migratedSinceOpened``).
    public let database: any Database
    /// The engine's own database under ``database``, which explains failures of a store
    /// migrated since it was opened (``StoreError/Code/migratedSinceOpened``): for what
    /// only one engine does, inside the package (the engines' types are not public).
    ///
    /// ```swift
    /// if let sqlite = store.engineDatabase as? SQLiteDatabase { try await sqlite.checkpoint() }
    /// ```
    package var engineDatabase: any Database { (database as? MigratedStoreExplanation)?.base ?? database }
    /// The store's metadata (the `Z_METADATA` plist) as it was when the store was opened.
    public let metadata: StoreMetadata
    /// Where a store of Apple's keeps the binary attributes Core Data may store outside it
    /// (``ExternalBinaryStorage``); `nil` for stores of this framework, which keep every value
    /// in its cell.
    public let externalBinaryStorage: ExternalBinaryStorage?
    let logger: Logger

    /// Each entity's properties and columns, worked out once for every context of the store.
    let layouts: [String: EntityLayout]
    /// Where each entity's properties are in a row of a ``SelectQuery`` on its table (the
    /// same for every entity of a hierarchy, whose tables have the same columns).
    let rowLayouts: [String: EntityLayout.RowLayout]
    /// Whether secondary indexes may be missing (``Options/defersIndexes``).
    private let indexesDeferred: Mutex<Bool>
    /// The select lists of values fetches, compiled once.
    let compiledSelections = CompiledSelections()

    /// A store open on `database`, laid out as `layout` says: the store's own
    /// (``StoreLayout/read(from:model:)``), or `nil` for a store just created.
    init(
        url: StoreURL,
        model: ManagedObjectModel,
        database: any Database,
        metadata: StoreMetadata,
        layout: StoreLayout?,
        logger: Logger,
        defersIndexes: Bool = false,
        checksModelVersion: Bool,
        externalBinaryStorage: ExternalBinaryStorage? = nil
    ) {
        self.url = url
        self.externalBinaryStorage = externalBinaryStorage
        self.indexesDeferred = Mutex(defersIndexes)
        self.model = model
        let schema = StoreSchema(model: model, dialect: database.dialect, layout: layout)
        self.schema = schema
        self.database = MigratedStoreExplanation(
            base: database,
            store: url,
            model: model,
            writeCheck: checksModelVersion ? ModelVersionCheck(model: model, opened: metadata, store: url, dialect: database.dialect) : nil
        )
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
    public static func open(
        _ url: StoreURL,
        model: ManagedObjectModel,
        options: Options = .existingOnly,
        logger: Logger
    ) async throws -> PersistentStore {
        try await url.engine.open(model: model, options: options, logger: logger)
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
        try url.engine.checkWritable()
    }

    /// Reads the metadata without opening the store for writing.
    public static func metadata(at url: StoreURL) async throws -> StoreMetadata {
        try await url.engine.metadata()
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
}
