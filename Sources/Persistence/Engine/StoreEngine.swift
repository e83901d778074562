import Foundation
import Logging

/// Everything one kind of store does its own way: how it is opened, read from outside,
/// destroyed, copied into and migrated. The framework picks the engine once, from the
/// store's URL (``StoreURL/engine``), and asks it; nothing outside `Engine/` asks which
/// engine a store lives on.
///
/// Each engine is one folder: `Engine/SQLite/` (files, and in-memory stores), and
/// `Engine/PostgreSQL/` (a schema of a database). An engine's SQL is spelled by its
/// ``SQLDialect``.
///
/// ```swift
/// let engine = try StoreURL("sqlite://./bookstore.sqlite").engine
/// let metadata = try await engine.metadata()
/// ```
protocol StoreEngine: Sendable {
    /// The store this engine reaches.
    var url: StoreURL { get }

    /// How the engine spells SQL.
    var dialect: any SQLDialect { get }

    /// The store's type as written in its metadata (`NSStoreType`).
    var storeType: String { get }

    /// The URL's scheme: `sqlite`, `postgres`, `memory`.
    var scheme: String { get }

    /// The file the store is, for an engine that keeps one; `nil` for a server's store or
    /// one in memory.
    var filePath: String? { get }

    /// The URL without a password.
    var displayURL: String { get }

    /// Opens the store for `model` (see ``PersistentStore/open(_:model:options:logger:)``).
    func open(model: ManagedObjectModel, options: PersistentStore.Options, logger: Logger) async throws -> PersistentStore

    /// Checks, without opening it, that this process could write the store.
    func checkWritable() throws(StoreError)

    /// Reads the metadata without opening the store for writing.
    func metadata() async throws -> StoreMetadata

    /// Runs `body` on a read-only connection of its own, the way an outside tool reads the
    /// store (see ``PersistentStore/inspect(_:_:)``).
    func inspect<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T

    /// Checks that there is a store whose tables ``PersistentStore/tables(at:)`` can list.
    func checkListable() throws(StoreError)

    /// Removes the store and everything it holds (see ``PersistentStore/destroy(at:logger:)``).
    func destroy(logger: Logger) async throws

    /// Where a copy into this store is written; `replace` lets it replace a store there.
    func copyTarget(replace: Bool) throws(StoreError) -> any StoreCopyTarget

    /// The dialect a migration of this store runs its SQL in; `nil` when its steps are not
    /// run as SQL (they stream through a ``MigrationManager``).
    var migrationDialect: (any SQLDialect)? { get }

    /// What a migration of this store needs of its engine.
    func migrationBackend() throws(MigrationError) -> any MigrationBackend

    /// How this store's writer reads the tables of `source` within its own statements, when
    /// it can (then entity mappings run as `INSERT … SELECT`); `nil` otherwise.
    func sourceAccess(reading source: StoreURL) -> SourceAccess?

    /// The tables of a store written by Apple's Core Data, for recognising its model
    /// version by them; `nil` where Apple's Core Data writes no stores.
    func appleStoreStructure() throws -> StoreStructure?

    /// How the store is laid out for `model` (its entities' numbers, its tables' names),
    /// read from outside; `nil` when the store can only be read through an open ``PersistentStore``.
    func storeLayout(model: ManagedObjectModel) async throws -> StoreLayout?
}

extension StoreURL {
    /// The engine of the store at this URL: the one place that knows which there are.
    var engine: any StoreEngine {
        switch kind {
        case .sqlite(let path): SQLiteEngine(url: self, path: path)
        case .memory(let name): InMemoryEngine(url: self, name: name)
        case .postgres(let configuration): PostgresEngine(url: self, configuration: configuration)
        }
    }
}

/// Every engine's dialect, for rules a model must keep on all of them (its store names).
enum StoreEngines {
    static let dialects: [any SQLDialect] = [SQLiteDialect(), PostgresDialect()]
}
