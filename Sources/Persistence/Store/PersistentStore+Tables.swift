import Foundation

extension PersistentStore {
    /// Every table of the store at `url` with its number of rows, in name order, read
    /// without a model and without writing anything: what a store holds when its model is
    /// not at hand (`persistence inspect` without `--models`).
    ///
    /// ```swift
    /// for (table, rows) in try await PersistentStore.tables(at: url) { print(table, rows) }
    /// // ZPOST 1001, Z_METADATA 1, Z_MODELCACHE 1, Z_PRIMARYKEY 1
    /// ```
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    public static func tables(at url: StoreURL) async throws -> [(name: String, rows: Int)] {
        let engine = url.engine
        try engine.checkListable()
        let listing = engine.dialect.tableListingQuery
        do {
            return try await engine.inspect { connection in
                try connection.rows(listing).compactMap { $0[0].text }.map { name in
                    (name, Int(try connection.scalar("SELECT count(*) FROM \(identifier: name)")?.int64 ?? 0))
                }
            }
        } catch let error as DatabaseError {
            throw StoreError(
                .database,
                "cannot read the tables of the store at \(url)",
                hint: "check that it is a store and readable",
                store: url.description,
                underlying: error
            )
        }
    }
}
