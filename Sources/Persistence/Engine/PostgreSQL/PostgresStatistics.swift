import Logging

/// The planner's statistics of a schema's tables, gathered before a migration's output
/// becomes the store.
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
            try await database.writeWithoutTransaction { connection in
                let tables = try PostgresSchemaContents.tableNames(in: schema, on: connection)
                guard !tables.isEmpty else { return }
                try connection.execute(
                    rawSQL: "ANALYZE " + tables.map { PostgresConfiguration.qualifiedName($0, inSchema: schema) }.joined(separator: ", ")
                )
            }
        } catch  where !Task.isCancelled {
            logger.warning(
                "the migrated tables were not analyzed; autovacuum will",
                metadata: [
                    LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(schema)", "persistence.error": "\(error)",
                ]
            )
        }
    }
}
