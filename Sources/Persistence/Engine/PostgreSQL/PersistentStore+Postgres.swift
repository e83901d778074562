import Foundation
import Logging

/// Opening stores in a PostgreSQL schema: the same checks as a SQLite file, with the
/// schema's tables in place of the file.
extension PersistentStore {
    static func openPostgres(
        url: StoreURL,
        configuration: PostgresConfiguration,
        model: ManagedObjectModel,
        options: Options,
        logger: Logger
    ) async throws -> PersistentStore {
        let database = try await connect(
            url,
            configuration,
            readerCount: options.readerCount,
            readOnly: options.readOnly,
            isDurable: options.isDurable
        )
        do {
            let (existing, ctype, layout) = try await readOpeningFacts(database, url: url, model: model)
            warnIfCaseFoldingIsASCIIOnly(ctype, url: url, logger: logger)
            if let metadata = existing {
                try check(metadata, isCompatibleWith: model, store: url)
                return PersistentStore(
                    url: url,
                    model: model,
                    database: database,
                    metadata: metadata,
                    layout: layout,
                    logger: logger,
                    defersIndexes: options.defersIndexes && !options.readOnly,
                    checksModelVersion: options.checksModelVersionOnWrite
                )
            }
            guard options.createIfMissing, !options.readOnly else { throw notFound(url, configuration) }
            let metadata = StoreMetadata(model: model, storeType: url.storeType)
            do {
                // One transaction: a failure leaves no half-created store behind.
                try await database.write { connection in
                    let schemaExists =
                        try connection.scalar(rawSQL: "SELECT 1 FROM pg_namespace WHERE nspname = $1", [.text(configuration.schema)]) != nil
                    if schemaExists {
                        try PostgresSchemaContents.read(configuration.schema, on: connection).refuse(
                            .creating,
                            configuration: configuration,
                            store: url
                        )
                    } else {
                        try connection.execute(rawSQL: "CREATE SCHEMA \(configuration.quotedSchema)")
                    }
                    try StoreCreation.create(model: model, metadata: metadata, on: connection, includingIndexes: !options.defersIndexes)
                }
            } catch let error as DatabaseError where error.sqlState == "42P07" || error.sqlState == "23505" {
                // Another process created the store (or the schema) meanwhile: open what it made.
                guard let existing = try await readMetadata(database, url: url) else {
                    throw StoreError(
                        .database,
                        "cannot create a store in schema '\(configuration.schema)' of database '\(configuration.databaseDescription)' at \(configuration.serverDescription)",
                        hint: "its tables clash with tables already there; use an empty schema (?schema=NAME)",
                        store: url.description,
                        underlying: error
                    )
                }
                try check(existing, isCompatibleWith: model, store: url)
                let layout = try await readStoreTables(database, url: url) { try StoreLayout.read(from: $0, model: model) }
                return PersistentStore(
                    url: url,
                    model: model,
                    database: database,
                    metadata: existing,
                    layout: layout,
                    logger: logger,
                    defersIndexes: options.defersIndexes,
                    checksModelVersion: options.checksModelVersionOnWrite
                )
            } catch let error as DatabaseError {
                throw StoreError(
                    .database,
                    "cannot create a store in schema '\(configuration.schema)' of database '\(configuration.databaseDescription)' at \(configuration.serverDescription)",
                    hint: "check that the user may create schemas and tables there",
                    store: url.description,
                    underlying: error
                )
            }
            logger.info("created store", metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(model.name)"])
            return PersistentStore(
                url: url,
                model: model,
                database: database,
                metadata: metadata,
                layout: nil,
                logger: logger,
                defersIndexes: options.defersIndexes,
                checksModelVersion: options.checksModelVersionOnWrite
            )
        } catch {
            await database.close()
            throw error
        }
    }

    /// Reads `z_metadata` in a read-only session that is closed again at once.
    static func readPostgresMetadata(url: StoreURL, configuration: PostgresConfiguration) async throws -> StoreMetadata {
        let database = try await connect(url, configuration, readerCount: 0, readOnly: true)
        let metadata: StoreMetadata?
        do {
            metadata = try await readMetadata(database, url: url)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
        guard let metadata else { throw notFound(url, configuration) }
        return metadata
    }

    private static func connect(
        _ url: StoreURL,
        _ configuration: PostgresConfiguration,
        readerCount: Int,
        readOnly: Bool,
        isDurable: Bool = true
    ) async throws -> PostgresDatabase {
        do {
            return try await PostgresDatabase.open(configuration, readerCount: readerCount, readOnly: readOnly, isDurable: isDurable)
        } catch let error as DatabaseError {
            throw StoreError(
                .connectionFailed,
                error.message,
                hint: "check that the server is running and accepts connections there, and the store URL's host, port, database, user and password",
                store: url.description
            )
        }
    }

    /// The store's metadata, or `nil` when the schema has no `z_metadata` table.
    private static func readMetadata(_ database: PostgresDatabase, url: StoreURL) async throws -> StoreMetadata? {
        let configuration = database.configuration
        return try await readStoreTables(database, url: url) { try readMetadata(configuration, url: url, on: $0) }
    }

    /// The store's metadata, `nil` without a `z_metadata` table (``refuseUnusableSchema``
    /// first: a schema the user may not use looks so too).
    private static func readMetadata(
        _ configuration: PostgresConfiguration,
        url: StoreURL,
        on connection: any DatabaseConnection
    ) throws -> StoreMetadata? {
        let metadata = try StoreMetadata.read(from: connection)
        if metadata == nil { try refuseUnusableSchema(configuration, url: url, on: connection) }
        return metadata
    }

    /// A schema the user has no `USAGE` of is left out of its search path, so its tables
    /// look absent: says that, rather than "there is no store" (or, creating one, that the
    /// schema holds other tables).
    private static func refuseUnusableSchema(_ configuration: PostgresConfiguration, url: StoreURL, on connection: any DatabaseConnection) throws {
        let row = try connection.rows(
            rawSQL: """
                SELECT pg_catalog.has_schema_privilege(oid, 'USAGE')::text, current_user FROM pg_catalog.pg_namespace WHERE nspname = $1
                """,
            [.text(configuration.schema)]
        ).first
        guard let row, row[0].text == "false", let user = row[1].text else { return }
        let quotedUser = user.quotedIdentifier
        throw StoreError(
            .database,
            "user '\(user)' may not use schema '\(configuration.schema)' of database '\(configuration.databaseDescription)' at \(configuration.serverDescription): it has no USAGE privilege there",
            hint: "as the schema's owner, grant it: GRANT USAGE ON SCHEMA \(configuration.quotedSchema) TO \(quotedUser); "
                + "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(configuration.quotedSchema) TO \(quotedUser)",
            store: url.description
        )
    }

    /// The store's metadata (`nil` without a `z_metadata` table), the database's `LC_CTYPE`
    /// and the store's layout for `model` (`nil` without a store), in one read
    /// transaction: opening costs one round of statements, not one per fact.
    private static func readOpeningFacts(
        _ database: PostgresDatabase,
        url: StoreURL,
        model: ManagedObjectModel
    ) async throws
        -> (StoreMetadata?, String?, StoreLayout?)
    {
        let configuration = database.configuration
        return try await readStoreTables(database, url: url) { connection in
            let metadata = try readMetadata(configuration, url: url, on: connection)
            let ctype = try? connection.scalar("SELECT datctype FROM pg_database WHERE datname = current_database()")?.text
            return (metadata, ctype, metadata == nil ? nil : try StoreLayout.read(from: connection, model: model))
        }
    }

    /// Reads on the writer, which is connected already (opening connects no reader); the
    /// errors name the store.
    private static func readStoreTables<T: Sendable>(
        _ database: PostgresDatabase,
        url: StoreURL,
        _ body: @escaping @Sendable (any DatabaseConnection) throws -> T
    ) async throws -> T {
        do {
            return try await database.readOnWriter(body)
        } catch var error as StoreError {
            error.store = url.description
            throw error
        } catch let error as DatabaseError {
            throw StoreError(
                .database,
                "cannot read the store's metadata",
                hint: "check that the user may read the schema's tables",
                store: url.description,
                underlying: error
            )
        }
    }

    /// `[c]` predicates fold case with `lower()`, which follows the database's `LC_CTYPE`:
    /// under `C` or `POSIX` it folds ASCII letters only, unlike the SQLite store.
    private static func warnIfCaseFoldingIsASCIIOnly(_ ctype: String?, url: StoreURL, logger: Logger) {
        guard let ctype, ctype == "C" || ctype == "POSIX" else { return }
        logger.warning(
            "the database's LC_CTYPE is \(ctype), so case-insensitive comparisons ([c]) fold ASCII letters only; create the database with a UTF-8 locale (e.g. LC_CTYPE 'C.UTF-8') to fold all of Unicode",
            metadata: [LoggingKeys.store: "\(url)"]
        )
    }

    private static func notFound(_ url: StoreURL, _ configuration: PostgresConfiguration) -> StoreError {
        StoreError(
            .storeNotFound,
            "there is no store in schema '\(configuration.schema)' of database '\(configuration.databaseDescription)' at \(configuration.serverDescription)",
            hint: "check the URL's database and ?schema=, or create the store with the app that uses it",
            store: url.description
        )
    }
}
