import Foundation

/// The values of attributes that allow external storage in a store of Apple's, moved into
/// their cells as a store of this framework keeps them.
///
/// Core Data's cell of such an attribute holds `1` and the bytes, or `2` and the name of a
/// file beside the store (``ExternalBinaryStorage``). A migrated store is read as this
/// framework's, which keeps every value in its cell as it is: so before anything else, in
/// the first step's transaction, each cell of `1` loses its marker (one `UPDATE`) and each
/// cell of `2` takes the bytes of the file it names (one row at a time, the file read in
/// Swift). The files are left where they are; the migrated store no longer reads them.
///
/// Every kind of step reads the plain cells: where the first step is not in place, the plan
/// runs a step in place from the store's version to itself first (see
/// ``ProgressiveMigrator/plan(forStoreAt:to:storeVersion:)``).
struct ExternallyStoredValues: Sendable {
    /// An attribute's column, as the store names it.
    struct Column: Sendable, Hashable {
        var attribute: String
        var table: String
        var column: String
    }

    let storage: ExternalBinaryStorage
    let store: StoreURL
    let columns: [Column]

    /// The values to carry for a store at `url` of `model`'s version laid out as `layout`:
    /// `nil` unless it is a store file written by Apple's Core Data (whose files lie beside
    /// it) with attributes that allow external storage.
    init?(storeAt url: StoreURL, metadata: StoreMetadata, model: ManagedObjectModel, layout: StoreLayout?) {
        guard metadata.isForeign, let path = url.filePath, let dialect = url.engine.migrationDialect else { return nil }
        let schema = StoreSchema(model: model, dialect: dialect, layout: layout)
        var columns: [Column] = []
        for entity in model.entities {
            for attribute in entity.attributes where attribute.allowsExternalBinaryDataStorage && !attribute.isTransient {
                guard let table = schema.table(for: entity.name), let column = table.column(for: attribute.name) else { continue }
                columns.append(Column(attribute: "\(entity.name).\(attribute.name)", table: table.name, column: column.name))
            }
        }
        guard !columns.isEmpty else { return nil }
        self.storage = ExternalBinaryStorage(storePath: path)
        self.store = url
        self.columns = columns
    }

    /// The attributes, `Entity.attribute`, for the plan and messages.
    var attributes: [String] { columns.map(\.attribute) }

    /// Makes every cell plain, on `connection` inside the step's transaction.
    ///
    /// - Throws: ``MigrationError`` naming the attribute and row whose file is missing or
    ///   whose cell is in neither of Core Data's forms; the transaction is then rolled back.
    func run(on connection: any DatabaseConnection) throws {
        for column in columns {
            let table: SQL = "\(identifier: column.table)"
            let cell: SQL = "\(identifier: column.column)"
            // The cells naming a file, found before the marked ones are shortened: a file's
            // bytes, once in, may start with a 1 themselves.
            let named = try connection.rows(
                """
                SELECT \(storeName: "Z_PK") FROM \(table) \
                WHERE typeof(\(cell)) = 'blob' AND length(\(cell)) > 0 AND substr(\(cell), 1, 1) <> x'01'
                """
            ).compactMap { $0[0].int64 }
            try connection.run(
                "UPDATE \(table) SET \(cell) = substr(\(cell), 2) WHERE typeof(\(cell)) = 'blob' AND substr(\(cell), 1, 1) = x'01'"
            )
            for key in named {
                let stored = try connection.scalar("SELECT \(cell) FROM \(table) WHERE \(storeName: "Z_PK") = \(key)") ?? .null
                let value: AttributeValue
                do {
                    value = try storage.value(of: stored, store: store)
                } catch {
                    throw MigrationError(
                        .store,
                        "cannot carry the value of \(column.attribute) of row \(key) into the migrated store: \(error.message)",
                        hint: (error.hint.map { $0 + "; " } ?? "") + "the store was not changed",
                        store: store.description
                    )
                }
                guard case .binary(let bytes) = value else { continue }
                try connection.run("UPDATE \(table) SET \(cell) = \(DatabaseValue.blob(bytes)) WHERE \(storeName: "Z_PK") = \(key)")
            }
        }
    }
}
