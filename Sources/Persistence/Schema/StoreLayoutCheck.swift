/// Compares a store's tables, columns, types, indexes and entity numbers with what a model
/// version's schema creates: every migrated store is checked before it replaces the store,
/// so a step that wrote something else fails, says what differs, and changes nothing.
///
/// Column order and the spelling of a type within its class do not count
/// (``StoreStructure``); indexes the schema makes must be there, on the same columns, and
/// indexes beside them are allowed (a store Core Data migrated keeps older versions' ones).
///
/// ```swift
/// let check = StoreLayoutCheck(schema: StoreSchema(model: v5, dialect: connection.dialect))
/// try check.differences(on: connection) // [] when the store is laid out as version 5 creates it
/// ```
struct StoreLayoutCheck: Sendable {
    /// What the store should be: the model version laid out for the store's engine.
    let schema: StoreSchema

    /// What differs, one line each, in a stable order; empty when the store on
    /// `connection` is laid out as ``schema`` creates it. Only reads.
    func differences(on connection: any DatabaseConnection) throws -> [String] {
        let store = try connection.dialect.storeStructure(on: connection)
        let expected = StoreStructure(schema: schema)
        return store.differences(from: expected) + store.lackingIndexes(comparedWith: expected)
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
