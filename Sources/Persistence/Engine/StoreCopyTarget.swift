/// A store that receives a copy, written all or nothing: the engine says how the new
/// store is made, filled in one transaction, and put in place.
protocol StoreCopyTarget {
    /// Creates the store's tables for `model`, laid out as `layout` says (the source's: a
    /// copy keeps every `Z_ENT` and the names of its join tables, hidden keys and order
    /// columns), lets `rows` fill them
    /// (through the database it is given, inside the copy's transaction), writes `metadata`
    /// and puts the store in place; a failure anywhere leaves the destination as it was.
    ///
    /// - Throws: ``StoreError/Code/alreadyExists`` when a store is there and `replace` is
    ///   not set, and the errors of writing.
    func fill(
        model: ManagedObjectModel,
        layout: StoreLayout,
        metadata: StoreMetadata,
        rows: (any Database) async throws -> [String: Int]
    ) async throws -> StoreCopy.Summary
}
