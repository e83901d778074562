import Foundation
import Logging

/// A store in a schema of a PostgreSQL database (`?schema=NAME`, `public` by default), for
/// deployments with several service replicas on one database.
struct PostgresEngine: StoreEngine {
    let url: StoreURL
    let configuration: PostgresConfiguration

    var dialect: any SQLDialect { PostgresDialect() }
    var storeType: String { "PostgreSQL" }
    var scheme: String { "postgres" }
    var filePath: String? { nil }
    var displayURL: String { configuration.description }

    func open(model: ManagedObjectModel, options: PersistentStore.Options, logger: Logger) async throws -> PersistentStore {
        try await PersistentStore.openPostgres(url: url, configuration: configuration, model: model, options: options, logger: logger)
    }

    /// A PostgreSQL store's rights show when it is written.
    func checkWritable() throws(StoreError) {}

    func metadata() async throws -> StoreMetadata {
        try await PersistentStore.readPostgresMetadata(url: url, configuration: configuration)
    }

    /// A read-only session in one snapshot.
    func inspect<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        let database = try await PostgresDatabase.open(configuration, readerCount: 0, readOnly: true)
        do {
            let result = try await database.read(body)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    func checkListable() throws(StoreError) {}

    /// Every `z` table of the schema in one transaction; the schema and anything else in it
    /// is left alone, and a schema holding other objects too is refused.
    func destroy(logger: Logger) async throws {
        let database = try await PostgresDatabase.open(configuration, readerCount: 0)
        do {
            let dropped = try await database.write { [configuration, url] connection in
                let contents = try PostgresSchemaContents.read(configuration.schema, on: connection)
                guard contents.holdsStore else { return 0 }
                try contents.refuse(.destroying, configuration: configuration, store: url)
                return try contents.dropStoreTables(on: connection)
            }
            await database.close()
            logger.info("destroyed store", metadata: [LoggingKeys.store: "\(url)", "persistence.store.tables": "\(dropped)"])
        } catch {
            await database.close()
            throw error
        }
    }

    func copyTarget(replace: Bool) throws(StoreError) -> any StoreCopyTarget {
        PostgresCopyTarget(configuration: configuration, url: url, replace: replace)
    }

    var migrationDialect: (any SQLDialect)? { dialect }

    func migrationBackend() throws(MigrationError) -> any MigrationBackend {
        PostgresMigrationBackend(store: url, configuration: configuration)
    }

    /// The source schema, when both stores are schemas of one database.
    func sourceAccess(reading source: StoreURL) -> SourceAccess? {
        guard let source = source.engine as? PostgresEngine else { return nil }
        var same = source.configuration
        same.schema = configuration.schema
        guard same == configuration else { return nil }
        return SourceAccess(schema: source.configuration.quotedSchema)
    }

    /// Apple's Core Data writes no PostgreSQL stores.
    func appleStoreStructure() throws -> StoreStructure? { nil }

    func storeLayout(model: ManagedObjectModel) async throws -> StoreLayout? {
        try await inspect { try StoreLayout.read(from: $0, model: model, forMigration: true) }
    }
}
