/// The planner's statistics of a schema's tables, gathered before a migration's output
/// becomes the store.
///
/// A table a migration writes is new to PostgreSQL: `reltuples` is -1 and no column has
/// statistics until autovacuum gets to it. Meanwhile the planner guesses every predicate's
/// selectivity, and autovacuum counts the table as empty, so the first fifty writes after
/// the migration start a `VACUUM ANALYZE` of the whole table (a minute's reading at a
/// million rows, beside the service's queries; an online migration from such a store met
/// it in every run of the benchmark). `ANALYZE` reads a sample (30 000 rows at the default
/// statistics target), not the table.
///
/// ```swift
/// try PostgresStatistics.analyze(schema: "public_migrating_1a2b3c4d", on: connection)
/// ```
enum PostgresStatistics {
    /// `ANALYZE`, in one statement, of every table of `schema` that was never analyzed (an
    /// online migration's copy, migrated as a store, was analyzed before its swap).
    static func analyze(schema: String, on connection: any DatabaseConnection) throws {
        let tables = try connection.rows("""
            SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
              AND pg_catalog.pg_stat_get_last_analyze_time(c.oid) IS NULL AND pg_catalog.pg_stat_get_last_autoanalyze_time(c.oid) IS NULL
            ORDER BY 1
            """, [.text(schema)]).compactMap { $0[0].text }
        guard !tables.isEmpty else { return }
        let quotedSchema = PostgresConfiguration.quoteIdentifier(schema)
        try connection.execute("ANALYZE " + tables.map { "\(quotedSchema).\(PostgresConfiguration.quoteIdentifier($0))" }.joined(separator: ", "))
    }
}
