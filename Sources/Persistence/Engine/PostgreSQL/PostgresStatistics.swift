import Logging

/// The planner's statistics of a schema's tables, gathered before a migration's output
/// becomes the store, and in the transaction of its in-place steps (a store just seeded
/// may have none yet, and the next step's chunked reads, planned without them, took a
/// second at 100 000 books that they take a tenth of with them).
///
/// A table a migration writes is new to PostgreSQL: `reltuples` is -1 and no column has
/// statistics until autovacuum gets to it. Meanwhile the planner guesses every predicate's
/// selectivity, and autovacuum counts the table as empty, so the first fifty changes after
/// the migration start a `VACUUM ANALYZE` of the whole table (an online migration from a
/// store the benchmark had just migrated met one during its bulk). `ANALYZE` reads a
/// sample (30 000 rows at the default statistics target), not the table.
///
/// ```swift
/// try await PostgresStatistics.analyze(schema: "public_migrating_1a2b3c4d", on: database, logger: logger, store: url)
/// ```
///
/// The vacuum a table's inserts call for (autovacuum's insert threshold) still follows, once,
/// as after any bulk load.
enum PostgresStatistics {
    /// `ANALYZE`, in one statement, of every table of `schema`. Best effort: statistics a
    /// server would not gather (a role's statement timeout, say) are not worth the
    /// migration; autovacuum gathers them later. Cancellation is not swallowed.
    static func analyze(schema: String, on database: any Database, logger: Logger, store: StoreURL) async throws {
        do {
            try await database.writeWithoutTransaction { try analyze(schema: schema, on: $0) }
        } catch  where !Task.isCancelled {
            logNotAnalyzed(schema: schema, error: error, logger: logger, store: store)
        }
    }

    /// `ANALYZE` of every table of `schema` inside the transaction `connection` is in (the
    /// in-place steps', whose renamed and added columns have none, and whose tables a
    /// store just written may never have had any), under a savepoint: a failure leaves
    /// the transaction as it was.
    static func analyzeInTransaction(schema: String, on connection: any DatabaseConnection, logger: Logger, store: StoreURL) throws {
        try connection.execute("SAVEPOINT \(identifier: "persistence_analyze")")
        do {
            try analyze(schema: schema, on: connection)
            try connection.execute("RELEASE SAVEPOINT \(identifier: "persistence_analyze")")
        } catch  where !Task.isCancelled {
            try connection.execute("ROLLBACK TO SAVEPOINT \(identifier: "persistence_analyze")")
            logNotAnalyzed(schema: schema, error: error, logger: logger, store: store)
        }
    }

    private static func analyze(schema: String, on connection: any DatabaseConnection) throws {
        let tables = try PostgresSchemaContents.tableNames(in: schema, on: connection)
        guard !tables.isEmpty else { return }
        try connection.execute(
            rawSQL: "ANALYZE " + tables.map { PostgresConfiguration.qualifiedName($0, inSchema: schema) }.joined(separator: ", ")
        )
    }

    private static func logNotAnalyzed(schema: String, error: any Error, logger: Logger, store: StoreURL) {
        logger.warning(
            "the migrated tables were not analyzed; autovacuum will",
            metadata: [
                LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(schema)", "persistence.error": "\(error)",
            ]
        )
    }
}
