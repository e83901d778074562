/// A PostgreSQL schema that receives a copied store, all in one transaction on the writer:
/// an existing store there is refused, or with `replace` its tables are dropped first (the
/// new ones get their owners and grants, ``PostgresPrivileges``); a
/// schema that holds anything else is refused (``PostgresSchemaContents``); a failure rolls
/// everything back.
struct PostgresCopyTarget: StoreCopyTarget {
    let configuration: PostgresConfiguration
    let url: StoreURL
    let replace: Bool

    func fill(
        model: ManagedObjectModel,
        layout: StoreLayout,
        metadata: StoreMetadata,
        rows: (any Database) async throws -> [String: Int]
    ) async throws -> StoreCopy.Summary {
        let database: PostgresDatabase
        do {
            database = try await PostgresDatabase.open(configuration, readerCount: 0)
        } catch let error as DatabaseError {
            throw StoreError(.connectionFailed, error.message, hint: "check that the server is running and the store URL", store: url.description)
        }
        let schema = configuration.schema
        let quoted = configuration.quotedSchema
        let replace = self.replace
        let url = self.url
        let configuration = self.configuration
        do {
            try await database.writeWithoutTransaction { connection in
                try connection.execute("BEGIN")
                let contents = try PostgresSchemaContents.read(schema, on: connection)
                if contents.holdsStore, !replace {
                    throw StoreError(
                        .alreadyExists,
                        "there is already a store in schema '\(schema)'",
                        hint: "pass --replace to replace it, or name another schema (?schema=NAME)",
                        store: url.description
                    )
                }
                try contents.refuse(.creating, configuration: configuration, store: url)
                // The replaced store's owners and grants, for the tables that take its place.
                let privileges = contents.holdsStore ? try PostgresPrivileges.read(schema, on: connection) : nil
                _ = try contents.dropStoreTables(on: connection)
                try connection.execute(rawSQL: "CREATE SCHEMA IF NOT EXISTS \(quoted)")
                for statement in StoreSchema(model: model, dialect: .postgres, layout: layout).createStatements() {
                    try connection.execute(statement)
                }
                try privileges?.give(to: schema, on: connection)
            }
            let counts = try await rows(database)
            try await database.writeWithoutTransaction { connection in
                try StoreCreation.writeMetadata(metadata, on: connection)
                try connection.execute("COMMIT")
            }
            await database.close()
            return StoreCopy.Summary(modelVersion: model.name, rows: counts)
        } catch {
            // Closing the session rolls the open transaction back.
            await database.close()
            throw error
        }
    }
}
