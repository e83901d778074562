extension PostgresConfiguration {
    /// How a connection pooler between the store and PostgreSQL hands out server sessions,
    /// in PgBouncer's words (its `pool_mode`); the store URL's `pool_mode` parameter.
    ///
    /// Without the parameter a connection finds out for itself: a pooler answers the
    /// connection with a process id of its own making, which is not the server session's
    /// `pg_backend_pid()`. A connection behind a pooler works as behind one in
    /// ``transaction`` mode, which is right for every mode but statement pooling; name
    /// ``session`` for the faster path where the pooler keeps a session per client.
    ///
    /// ```swift
    /// let pooled = try PostgresConfiguration(url: "postgres://shop@pgbouncer:6432/shop?pool_mode=transaction")
    /// pooled.poolMode  // .transaction
    /// ```
    public enum PoolMode: String, Sendable, Hashable, CaseIterable {
        /// One server session per client for as long as it is connected, as a direct
        /// connection has: statements are prepared once per session and the session's
        /// settings are made once.
        case session
        /// Each transaction runs on whichever server session is free (PgBouncer's
        /// `pool_mode = transaction`, the pooled endpoints of managed servers): no statement
        /// stays prepared and every transaction sets the store's schema itself. A migration
        /// needs a session of its own for its lock: it takes a direct URL.
        case transaction
        /// Each statement runs on whichever server session is free, and transactions are
        /// not allowed: a store needs them, so such a URL is refused.
        case statement
    }

    /// Why a store cannot go through a pooler in statement mode, and what to do instead.
    static let statementPoolingRefusal = (
        reason: "a pooler in statement mode (pool_mode = statement) runs no transactions, and a store's reads and saves are transactions",
        hint: "point the store URL at a pooler in transaction or session mode, or at PostgreSQL itself"
    )
}
