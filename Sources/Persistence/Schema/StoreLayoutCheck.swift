/// Compares a store's tables, columns, types, indexes and entity numbers with what a model
/// version's schema creates: every migrated store is checked before it replaces the store,
/// so a step that wrote something else fails, says what differs, and changes nothing.
///
/// Column order does not count, nor, on SQLite, the spelling of a type within its class
/// (``StoreStructure``; PostgreSQL's types are compared as spelt). The look-up indexes the
/// schema makes must be there (by their leading column), and the uniqueness-constraint and
/// fetch indexes (by their columns, order, direction, uniqueness and whether partial, under
/// any name); indexes beside them are allowed (a store Core Data migrated keeps older
/// versions' ones). A store checked as laid out (``init(existingStoreOn:model:checksIndexes:)``)
/// is compared with its own entity numbers: `Z_PRIMARYKEY` must list the version's entities.
///
/// ```swift
/// let check = StoreLayoutCheck(schema: StoreSchema(model: v5, dialect: connection.dialect))
/// try check.differences(on: connection) // [] when the store is laid out as version 5 creates it
/// ```
struct StoreLayoutCheck: Sendable {
    /// What the store should be: the model version laid out for the store's engine.
    let schema: StoreSchema
    /// Whether the indexes the schema makes must be there: in a store the framework made,
    /// yes; a store Core Data wrote may lack some (``StoreStructure/notes(comparedWith:)``),
    /// which steps run in place do not add.
    var checksIndexes = true

    /// The check of a new store, laid out as `schema` says.
    init(schema: StoreSchema, checksIndexes: Bool = true) {
        self.schema = schema
        self.checksIndexes = checksIndexes
    }

    /// The check of the store on `connection` at `model`'s version, laid out as it is: its
    /// entity numbers (`Z_PRIMARYKEY`), its join tables' and columns' names. Only reads.
    init(existingStoreOn connection: any DatabaseConnection, model: ManagedObjectModel, checksIndexes: Bool) throws {
        let layout = try StoreLayout.read(from: connection, model: model)
        self.init(schema: StoreSchema(model: model, dialect: connection.dialect, layout: layout), checksIndexes: checksIndexes)
    }

    /// What differs, one line each, in a stable order; empty when the store on
    /// `connection` is laid out as ``schema`` creates it. Only reads.
    func differences(on connection: any DatabaseConnection) throws -> [String] {
        let found = try differencesByKind(on: connection)
        return found.tables + found.indexes
    }

    /// ``differences(on:)`` apart: the tables, columns, types and entities, and the indexes
    /// (none when ``checksIndexes`` is off).
    func differencesByKind(on connection: any DatabaseConnection) throws -> (tables: [String], indexes: [String]) {
        differencesByKind(of: try connection.dialect.storeStructure(on: connection))
    }

    /// ``differencesByKind(on:)`` of a structure already read.
    func differencesByKind(of store: StoreStructure) -> (tables: [String], indexes: [String]) {
        let expected = StoreStructure(schema: schema)
        return (store.differences(from: expected), checksIndexes ? store.lackingIndexes(comparedWith: expected) : [])
    }

    /// Throws ``MigrationError/Code/layoutDiffers`` naming what differs, when anything does.
    /// `afterwards` says what became of the store (the hint's first part).
    func verify(on connection: any DatabaseConnection, afterwards: String) throws {
        let found = try differences(on: connection)
        guard !found.isEmpty else { return }
        throw MigrationError(
            .layoutDiffers,
            "the migrated store is not laid out as '\(schema.model.name)' creates it: \(found.joined(separator: "; "))",
            hint: "\(afterwards); report this with the output of `migrate --plan`"
        )
    }
}

extension PersistentStore {
    /// What the store at `url` holds that differs from what `model` creates, laid out as the
    /// store is (its entity numbers, its tables' and columns' names), one line each; an empty
    /// `differences` when its tables, columns, type classes, entity numbers and the model's
    /// indexes are all there. `notes`: what does not count (indexes beside the model's,
    /// tables beside Core Data's). The indexes are checked unless the store was written by
    /// Apple's Core Data, which may lack some. Only reads (``inspect(_:_:)``).
    ///
    /// ```swift
    /// let found = try await PersistentStore.layoutDifferences(at: url, model: versions.current)
    /// found.differences // ["ZPUBLICATION lacks the column ZSYNOPSIS (text)"]
    /// ```
    ///
    /// - Throws: ``StoreError`` or ``DatabaseError`` when the store cannot be read.
    public static func layoutDifferences(at url: StoreURL, model: ManagedObjectModel) async throws -> (differences: [String], notes: [String]) {
        let checksIndexes = !(try await metadata(at: url)).isForeign
        return try await inspect(url) { connection in
            let check = try StoreLayoutCheck(existingStoreOn: connection, model: model, checksIndexes: checksIndexes)
            // The catalogue read once, for the differences and the notes.
            let store = try connection.dialect.storeStructure(on: connection)
            let found = check.differencesByKind(of: store)
            let differences = found.tables + found.indexes
            // A lacking index counted is not noted again.
            let notes = store.notes(comparedWith: StoreStructure(schema: check.schema)).filter { !differences.contains($0) }
            return (differences, notes)
        }
    }
}
