import Foundation

/// Writes an empty store for a model: schema, `Z_PRIMARYKEY` and `Z_METADATA`.
enum StoreCreation {
    /// Creates the store's tables with its entities numbered by `numbering` (by default as a
    /// new store is), its `Z_PRIMARYKEY` and `Z_METADATA`.
    static func create(
        model: ManagedObjectModel,
        metadata: StoreMetadata,
        on connection: any DatabaseConnection,
        includingIndexes: Bool = true,
        numbering: EntityNumbering? = nil
    ) throws {
        let schema = StoreSchema(model: model, dialect: connection.dialect, numbering: numbering)
        for statement in schema.createStatements(includingIndexes: includingIndexes) {
            try connection.execute(statement)
        }
        for row in schema.primaryKeyRows() {
            try connection.run(
                """
                INSERT INTO \(storeName: "Z_PRIMARYKEY") (\(storeName: "Z_ENT"), \(storeName: "Z_NAME"), \(storeName: "Z_SUPER"), \(storeName: "Z_MAX")) \
                VALUES (\(row.entity), \(row.name), \(row.superEntity), 0)
                """
            )
        }
        try writeMetadata(metadata, on: connection)
    }

    /// Replaces the `Z_METADATA` row, and empties `Z_MODELCACHE`: Core Data keeps the
    /// compiled model that wrote the store there, which no longer describes the store once
    /// another model's metadata is written (Core Data rebuilds it when missing).
    static func writeMetadata(_ metadata: StoreMetadata, on connection: any DatabaseConnection) throws {
        if try tableExists("Z_MODELCACHE", on: connection) {
            try connection.run("DELETE FROM \(storeName: "Z_MODELCACHE")")
        }
        try connection.run("DELETE FROM \(storeName: "Z_METADATA")")
        try connection.run(
            """
            INSERT INTO \(storeName: "Z_METADATA") (\(storeName: "Z_VERSION"), \(storeName: "Z_UUID"), \(storeName: "Z_PLIST")) \
            VALUES (1, \(metadata.storeUUID), \(DatabaseValue.blob(try metadata.propertyListData())))
            """
        )
    }

    /// Whether the database has the bookkeeping table `name` (`Z_METADATA`).
    static func tableExists(_ name: String, on connection: any DatabaseConnection) throws -> Bool {
        try connection.scalar(connection.dialect.tableExistsQuery(name)) != nil
    }
}

extension StoreMetadata {
    /// The newest `Z_METADATA` row's `Z_UUID` and `Z_PLIST`.
    static let metadataQuery: SQL =
        "SELECT \(storeName: "Z_UUID"), \(storeName: "Z_PLIST") FROM \(storeName: "Z_METADATA") ORDER BY \(storeName: "Z_VERSION") DESC LIMIT 1"

    /// Reads `Z_METADATA` on an open connection; `nil` when the database has no such table.
    static func read(from connection: any DatabaseConnection) throws -> StoreMetadata? {
        guard try StoreCreation.tableExists("Z_METADATA", on: connection) else { return nil }
        guard let row = try connection.rows(metadataQuery).first,
            let plist = row[1].blob
        else {
            throw StoreError(.missingMetadata, "the store's Z_METADATA table is empty", hint: "the store is damaged; restore it from a backup")
        }
        return try StoreMetadata(propertyListData: plist, uuid: row[0].text)
    }
}
