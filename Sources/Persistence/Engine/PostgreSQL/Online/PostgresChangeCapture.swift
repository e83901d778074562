import Foundation

/// Records every row other sessions insert, update or delete in a store's tables while an
/// online migration copies them, so that the rows changed meanwhile can be migrated again.
///
/// A schema of its own beside the store (`<schema>_capturing_<id>`, see
/// ``PostgresShadowName``) holds the `changes` table and one trigger function per table;
/// an `AFTER … FOR EACH ROW` trigger on each of the store's tables calls it, in the
/// writer's own transaction: a change is recorded if and only if it commits. The functions
/// run as their owner (`SECURITY DEFINER`), so a service connecting as another role still
/// records its changes. Dropping the schema drops the functions and, with them, every
/// trigger: ``remove(on:)`` and ``removeAbandoned(beside:on:)`` leave nothing behind.
///
/// ```swift
/// let capture = try PostgresChangeCapture.install(tables: [.init(name: "zpublication", keyColumns: ["z_pk"])],
///                                                 storeSchema: "bookstore", on: connection)
/// // … other sessions write …
/// let changes = try capture.claim(limit: 1_000, on: connection)   // in the transaction that migrates them again
/// try capture.remove(on: connection)
/// ```
struct PostgresChangeCapture: Sendable, Hashable {
    /// A table whose changes are recorded, and the columns that name its rows: an entity
    /// table's primary key, a join table's two keys.
    struct Table: Sendable, Hashable {
        /// A to-one relationship's column and the table whose rows it names.
        struct Reference: Sendable, Hashable {
            let column: String
            let table: String
        }

        let name: String
        let keyColumns: [String]
        /// The rows a row of this table points at, before and after a change, are recorded
        /// as changed too (``Change/Kind/related``): their to-many relationships changed.
        var references: [Reference] = []
    }

    /// One recorded change of a row.
    struct Change: Sendable, Hashable {
        enum Kind: String, Sendable {
            case insert = "I"
            case update = "U"
            case delete = "D"
            /// A row that a changed row points at (or pointed at) through a to-one
            /// relationship: its to-many relationship's members changed.
            case related = "R"
        }

        /// Where it was recorded in order.
        let sequence: Int64
        let table: String
        /// The row's key columns' values, in the order of ``Table/keyColumns``.
        let keys: [Int64]
        let kind: Kind
    }

    /// The schema of the store whose tables are watched.
    let storeSchema: String
    /// The schema of the `changes` table and the trigger functions.
    let captureSchema: String

    /// Creates the capture schema and a trigger on each table of `tables`, in the store's
    /// schema. Run it in a transaction, before the migration reads anything: every change
    /// committed after that transaction is recorded.
    ///
    /// Creating a trigger waits for the write transactions in flight on its table (so none
    /// escapes the capture), at most `lockTimeout` per table: the locks are taken table by
    /// table, and a writer holding one table while it wants another would otherwise wait
    /// for this transaction as it waits for the writer. Past the timeout the server
    /// refuses with `lock_not_available` (`55P03`), or `deadlock_detected` (`40P01`), and
    /// the caller rolls back and tries again.
    ///
    /// - Throws: ``PostgresChangeCaptureError`` for a table without key columns or with
    ///   more than two; `DatabaseError` from the server (a table that does not exist, a
    ///   lock not had in time).
    static func install(
        tables: [Table],
        storeSchema: String,
        lockTimeout: Duration = .milliseconds(200),
        on connection: any DatabaseConnection
    ) throws -> PostgresChangeCapture {
        for table in tables where table.keyColumns.isEmpty || table.keyColumns.count > 2 {
            throw PostgresChangeCaptureError(
                "the table \(table.name) is named by \(table.keyColumns.count) key columns; a captured row is named by one (an entity table's primary key) or two (a join table's keys)"
            )
        }
        let capture = PostgresChangeCapture(storeSchema: storeSchema, captureSchema: PostgresShadowName.new(beside: storeSchema, kind: .capturing))
        let schema = capture.captureSchema.quotedIdentifier
        try connection.execute(
            rawSQL: """
                CREATE SCHEMA \(schema);
                CREATE TABLE \(schema).changes (
                    sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    table_name text NOT NULL,
                    key1 bigint NOT NULL,
                    key2 bigint,
                    kind "char" NOT NULL)
                """
        )
        try yieldingAutovacuum(tables.map { PostgresConfiguration.qualifiedName($0.name, inSchema: storeSchema) }, on: connection)
        // Shared among the tables: a writer queued on a table whose trigger is made waits
        // while the next ones are waited for.
        try withLockTimeout(lockTimeout, dividedAmong: tables.count, on: connection) {
            for (index, table) in tables.enumerated() {
                try connection.execute(rawSQL: capture.triggerStatements(for: table, function: "record_\(index)"))
            }
        }
        return capture
    }

    /// The function that records a row of `table`, and the trigger that calls it.
    private func triggerStatements(for table: Table, function: String) -> String {
        let changes = "\(captureSchema.quotedIdentifier).changes"
        let name = "'" + table.name.replacingOccurrences(of: "'", with: "''") + "'"
        func keys(_ row: String) -> String {
            let values = table.keyColumns.map { "\(row).\(($0).quotedIdentifier)" }
            return values.count == 1 ? values[0] + ", NULL" : values.joined(separator: ", ")
        }
        let keysChanged = table.keyColumns.map { "OLD.\(($0).quotedIdentifier) IS DISTINCT FROM NEW.\(($0).quotedIdentifier)" }.joined(
            separator: " OR "
        )
        let qualifiedFunction = PostgresConfiguration.qualifiedName(function, inSchema: captureSchema)
        var related = ""
        for reference in table.references {
            let (column, target) = (reference.column.quotedIdentifier, "'" + reference.table.replacingOccurrences(of: "'", with: "''") + "'")
            // The row before (its values changed, or it left), and a row it now points at.
            related += """

                    IF TG_OP <> 'INSERT' THEN
                        IF OLD.\(column) IS NOT NULL THEN
                            INSERT INTO \(changes) (table_name, key1, key2, kind) VALUES (\(target), OLD.\(column), NULL, 'R');
                        END IF;
                    END IF;
                    IF TG_OP = 'INSERT' THEN
                        IF NEW.\(column) IS NOT NULL THEN
                            INSERT INTO \(changes) (table_name, key1, key2, kind) VALUES (\(target), NEW.\(column), NULL, 'R');
                        END IF;
                    ELSIF TG_OP = 'UPDATE' THEN
                        IF NEW.\(column) IS NOT NULL AND NEW.\(column) IS DISTINCT FROM OLD.\(column) THEN
                            INSERT INTO \(changes) (table_name, key1, key2, kind) VALUES (\(target), NEW.\(column), NULL, 'R');
                        END IF;
                    END IF;
                """
        }
        let body = """
            BEGIN
                IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND (\(keysChanged))) THEN
                    INSERT INTO \(changes) (table_name, key1, key2, kind) VALUES (\(name), \(keys("OLD")), 'D');
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    INSERT INTO \(changes) (table_name, key1, key2, kind) VALUES (\(name), \(keys("NEW")), left(TG_OP, 1));
                END IF;\(related)
                RETURN NULL;
            END
            """
        // A tag the body does not hold: the names in it are the store's, whatever they are.
        var tag = "$capture$"
        while body.contains(tag) { tag = "$capture_\(UUID().uuidString.prefix(8).lowercased())$" }
        return """
            CREATE FUNCTION \(qualifiedFunction)() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS \(tag)
            \(body)
            \(tag);
            CREATE TRIGGER \(captureSchema.quotedIdentifier) AFTER INSERT OR UPDATE OR DELETE ON \(PostgresConfiguration.qualifiedName(table.name, inSchema: storeSchema))
            FOR EACH ROW EXECUTE FUNCTION \(qualifiedFunction)()
            """
    }

    /// Takes up to `limit` of the oldest recorded changes out of the table and returns
    /// them in the order they were recorded. Run it in the transaction that migrates their
    /// rows again: if that transaction rolls back, they are recorded still. Changes other
    /// sessions have not committed yet are left for a later claim, so a later claim may
    /// return a lower ``Change/sequence``: the sequence orders the changes of one row (its
    /// writers wait for one another), never marks how far the capture has been read. A
    /// claim migrates each row's state as it is then, whatever the changes' order.
    func claim(limit: Int, on connection: any DatabaseConnection) throws -> [Change] {
        let changes = "\(captureSchema.quotedIdentifier).changes"
        let rows = try connection.rows(
            rawSQL: """
                DELETE FROM \(changes) WHERE sequence IN (SELECT sequence FROM \(changes) ORDER BY sequence LIMIT $1 FOR UPDATE SKIP LOCKED) \
                RETURNING sequence, table_name, key1, key2, kind
                """,
            [.integer(Int64(max(limit, 0)))]
        )
        return try rows.map { row in
            guard let sequence = row[0].int64, let table = row[1].text, let key1 = row[2].int64,
                let kind = row[4].text.flatMap(Change.Kind.init(rawValue:))
            else { throw PostgresChangeCaptureError("the change table \(changes) holds a row this version does not read (\(row))") }
            return Change(sequence: sequence, table: table, keys: row[3].int64.map { [key1, $0] } ?? [key1], kind: kind)
        }.sorted { $0.sequence < $1.sequence }
    }

    /// How many recorded changes are waiting (committed ones only).
    func pendingCount(on connection: any DatabaseConnection) throws -> Int {
        Int(try connection.scalar(rawSQL: "SELECT count(*) FROM \(captureSchema.quotedIdentifier).changes")?.int64 ?? 0)
    }

    /// Drops the capture schema, and with its functions every trigger on the store's
    /// tables. In the cut-over's transaction, nothing is recorded after it commits.
    ///
    /// Dropping a trigger locks its table against readers too: a reader in the way holds
    /// the drop off at most `lockTimeout` (then `lock_not_available`, and the caller tries
    /// again), so the previous release's statements never queue behind it for longer.
    func remove(lockTimeout: Duration = .milliseconds(200), on connection: any DatabaseConnection) throws {
        try Self.yieldingAutovacuum(Self.tablesTriggered(fromSchema: captureSchema, on: connection), on: connection)
        try Self.withLockTimeout(lockTimeout, on: connection) {
            try connection.execute(rawSQL: "DROP SCHEMA IF EXISTS \(captureSchema.quotedIdentifier) CASCADE")
        }
    }

    /// Drops the capture schemas beside `storeSchema` that a killed online migration left,
    /// with their triggers; returns their names. Only schemas named as a capture is, the
    /// prefix and an id of eight hexadecimal digits (a schema of the user's that begins
    /// alike is left), and only under the migration lock: a running migration's capture
    /// looks the same. Waits for readers in the way as ``remove(lockTimeout:on:)`` does.
    static func removeAbandoned(
        beside storeSchema: String,
        lockTimeout: Duration = .milliseconds(200),
        on connection: any DatabaseConnection
    ) throws -> [String] {
        let names = try connection.rows("SELECT nspname FROM pg_namespace ORDER BY nspname").compactMap { $0[0].text }
        let schemas = PostgresShadowName.named(.capturing, beside: storeSchema, in: names)
        try yieldingAutovacuum(try schemas.flatMap { try tablesTriggered(fromSchema: $0, on: connection) }, on: connection)
        try withLockTimeout(lockTimeout, on: connection) {
            for schema in schemas {
                try connection.execute(rawSQL: "DROP SCHEMA IF EXISTS \(schema.quotedIdentifier) CASCADE")
            }
        }
        return schemas
    }

    /// Runs `body` with the transaction's `lock_timeout` at `timeout`, then as it was.
    ///
    /// Never longer than half the server's `deadlock_timeout`, `locks` waits together:
    /// triggers are created and dropped table by table, and a writer holding one table while
    /// it waits for the next may wait for this transaction while it waits for the writer;
    /// the lock timeout must end that first, or the server's deadlock check may end the
    /// writer's transaction.
    static func withLockTimeout(
        _ timeout: Duration,
        dividedAmong locks: Int = 1,
        on connection: any DatabaseConnection,
        _ body: () throws -> Void
    ) throws {
        let milliseconds = max(try shorterThanDeadlockCheck(timeout, on: connection, fraction: 0.5) / Int64(max(locks, 1)), 1)
        let before = try connection.scalar("SELECT current_setting('lock_timeout')")?.text ?? "0"
        try connection.run(rawSQL: "SELECT set_config('lock_timeout', $1, true)", [.text("\(milliseconds)ms")])
        try body()
        try connection.run(rawSQL: "SELECT set_config('lock_timeout', $1, true)", [.text(before)])
    }

    /// Takes `SHARE UPDATE EXCLUSIVE` on `tables` (qualified, quoted) until the transaction
    /// ends, waiting past the server's `deadlock_timeout`: an autovacuum of one of them then
    /// gives way (the server cancels an autovacuum that blocks a lock request for that
    /// long) and starts no other. The lock keeps neither readers nor writers waiting (they
    /// do not queue behind it), so the locks taken after it, which they wait for, are taken
    /// at once rather than wait for a vacuum that may last minutes. A vacuum run by hand
    /// is not cancelled: the lock is then not had in time (`lock_not_available`) and the
    /// caller tries again later.
    ///
    /// One round trip: it comes before locks whose waits must end before the server's
    /// deadlock check, and a writer may already be waiting for this transaction.
    static func yieldingAutovacuum(_ tables: [String], on connection: any DatabaseConnection) throws {
        guard !tables.isEmpty else { return }
        try connection.execute(
            rawSQL: """
                SELECT set_config('persistence.lock_timeout_before', current_setting('lock_timeout'), true);
                SELECT set_config('lock_timeout', (setting::bigint * 2 + 500)::text || 'ms', true) FROM pg_settings WHERE name = 'deadlock_timeout';
                LOCK TABLE \(Array(Set(tables)).sorted().joined(separator: ", ")) IN SHARE UPDATE EXCLUSIVE MODE;
                SELECT set_config('lock_timeout', current_setting('persistence.lock_timeout_before'), true)
                """
        )
    }

    /// The tables (qualified, quoted) with a trigger whose function is in `schema`.
    static func tablesTriggered(fromSchema schema: String, on connection: any DatabaseConnection) throws -> [String] {
        try connection.rows(
            rawSQL: """
                SELECT DISTINCT format('%I.%I', tn.nspname, c.relname) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid \
                JOIN pg_namespace fn ON fn.oid = p.pronamespace JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace tn ON tn.oid = c.relnamespace \
                WHERE fn.nspname = $1
                """,
            [.text(schema)]
        ).compactMap { $0[0].text }
    }

    /// `timeout` in milliseconds, at most `fraction` of the server's `deadlock_timeout`.
    static func shorterThanDeadlockCheck(_ timeout: Duration, on connection: any DatabaseConnection, fraction: Double) throws -> Int64 {
        let requested = max(timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000, 1)
        let deadlock = try connection.scalar("SELECT setting::bigint FROM pg_settings WHERE name = 'deadlock_timeout'")?.int64 ?? 1_000
        return max(min(requested, Int64(Double(deadlock) * fraction)), 1)
    }
}

/// A change capture that cannot be installed or read.
struct PostgresChangeCaptureError: Error, Sendable, CustomStringConvertible {
    let message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}
