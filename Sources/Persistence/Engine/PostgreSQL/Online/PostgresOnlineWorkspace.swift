import Foundation
import Logging

/// Migrates a PostgreSQL store while the previous release keeps reading and writing it
/// (see ``OnlineMigrationWorkspace`` for the phases, docs/ONLINE-MIGRATIONS.md for why).
///
/// - A ``PostgresChangeCapture`` records every change of the store's root and join tables.
/// - The store is copied into a schema beside it (`<schema>_migrating_<id>`) in one
///   `REPEATABLE READ` transaction, begun after the capture was installed: each change
///   either is in the copy or is recorded (or both).
/// - A catch-up round takes changes in its own session's transaction, writes the rows
///   they name into a round store beside the store (``PostgresChangedRows``), which the
///   runner migrates, and merges the result into the copy (``PostgresRoundMerge``) in the
///   transaction that took the changes.
/// - The cut-over locks the captured tables `IN EXCLUSIVE MODE` (other sessions read on,
///   writers wait) under a lock timeout, catches up with what is left, then swaps the copy
///   in and drops the capture in that transaction.
///
/// Schemas of a killed run are named as a migration's shadows and captures are, and the
/// next run (under the migration lock) drops them before it installs its own capture.
final class PostgresOnlineWorkspace: OnlineMigrationWorkspace {
    let store: StoreURL
    let configuration: PostgresConfiguration
    let plan: MigrationPlan
    let keys: OnlineKeyCorrespondence
    let logger: Logger
    /// The store's layout at its version, with its own entity numbers.
    let source: StoreSchema
    /// The session that takes changes and merges rounds, in one transaction each.
    private let session: PostgresDatabase
    private var capture: PostgresChangeCapture?
    /// The copy and round stores made and not yet swapped in or dropped.
    private var made: Set<String> = []
    /// The copy's layout at the target version, read once it is migrated.
    private var target: StoreSchema?

    private init(
        store: StoreURL,
        configuration: PostgresConfiguration,
        plan: MigrationPlan,
        keys: OnlineKeyCorrespondence,
        logger: Logger,
        source: StoreSchema,
        session: PostgresDatabase
    ) {
        self.store = store
        self.configuration = configuration
        self.plan = plan
        self.keys = keys
        self.logger = logger
        self.source = source
        self.session = session
    }

    /// Checks the schema holds the store alone (the swap drops it with the old tables) and
    /// reads the store's layout.
    static func prepare(
        store: StoreURL,
        configuration: PostgresConfiguration,
        plan: MigrationPlan,
        keys: OnlineKeyCorrespondence,
        logger: Logger
    ) async throws -> PostgresOnlineWorkspace {
        let session = try await openSession(configuration, store: store)
        do {
            try await session.writeWithoutTransaction { connection in
                try PostgresSchemaContents.read(configuration.schema, on: connection).refuse(.migrating, configuration: configuration, store: store)
            }
            let opened = try await PersistentStore.open(store, model: plan.storeVersion, options: .readOnly, logger: logger)
            let source = opened.schema
            await opened.close()
            return PostgresOnlineWorkspace(
                store: store,
                configuration: configuration,
                plan: plan,
                keys: keys,
                logger: logger,
                source: source,
                session: session
            )
        } catch {
            await session.close()
            throw error
        }
    }

    /// A session of the migration's own, whose transactions may stay open while a round's
    /// store is migrated.
    private static func openSession(_ configuration: PostgresConfiguration, store: StoreURL) async throws -> PostgresDatabase {
        try await PostgresMigrationSession.open(configuration, store: store, longTransactions: true)
    }

    /// The tables whose changes are recorded: every root table by `z_pk`, every join table
    /// by its two keys.
    private var capturedTables: [PostgresChangeCapture.Table] {
        let d = source.dialect
        let edges = PostgresChangedRows.Relationships(source).edges
        return source.rootTables.map { table in
            let name = d.name(table.name)
            return PostgresChangeCapture.Table(
                name: name,
                keyColumns: ["z_pk"],
                references: edges.filter { $0.table == name }.map { .init(column: $0.column, table: $0.target) }
            )
        } + source.allJoinTables.map { .init(name: d.name($0.name), keyColumns: [d.name($0.sourceColumn), d.name($0.destinationColumn)]) }
    }

    func installCapture() async throws {
        let (schema, store, tables) = (configuration.schema, self.store, capturedTables)
        do {
            try await installCapture(tables: tables, schema: schema)
        } catch let error as DatabaseError where Self.isLockInTheWay(error) {
            throw MigrationError(
                .storeBusy,
                "other sessions kept write transactions open on the store's tables for \(WriterFencePatience.duration): the online migration's capture waits for them to end, to record every later change",
                hint: "nothing was changed; run the migration again once long transactions on the store have ended",
                store: store.description,
                underlying: error
            )
        }
    }

    private func installCapture(tables: [PostgresChangeCapture.Table], schema: String) async throws {
        let (store, logger) = (self.store, self.logger)
        try await Self.retryingLocks(logger: logger, store: store) {
            try await self.session.writeWithoutTransaction { connection in
                for shadow in try PostgresShadowName.leftovers(beside: schema, on: connection) {
                    try connection.execute(rawSQL: "DROP SCHEMA IF EXISTS \(shadow.quotedIdentifier) CASCADE")
                    logger.notice(
                        "removed the shadow schema of an interrupted migration",
                        metadata: [LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(shadow)"]
                    )
                }
            }
            let removed = try await self.session.write { try PostgresChangeCapture.removeAbandoned(beside: schema, on: $0) }
            for name in removed {
                logger.notice(
                    "removed the change capture of an interrupted online migration",
                    metadata: [LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(name)"]
                )
            }
            self.capture = try await self.session.write { try PostgresChangeCapture.install(tables: tables, storeSchema: schema, on: $0) }
        }
    }

    func copyStore(throttle: MigrationThrottle?) async throws -> StoreURL {
        let name = PostgresShadowName.new(beside: configuration.schema, kind: .migrating)
        made.insert(name)
        let (schema, rootTables) = (configuration.schema, Set(source.rootTables.map { source.dialect.name($0.name) }))
        let (copy, store) = (name.quotedIdentifier, schema.quotedIdentifier)
        // Unlogged where a step writes a new store from it: the copy is then the
        // migration's source, read once, and a crash ends the run, whose next one starts
        // over. Where every step runs in place, the copy becomes the store: logged.
        let create = plan.steps.contains { $0.strategy != .inPlace } ? "CREATE UNLOGGED TABLE" : "CREATE TABLE"
        try await withSession { database in
            let tables = try await database.writeWithoutTransaction { connection in
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                do {
                    try connection.execute(rawSQL: "CREATE SCHEMA \(copy)")
                    let tables = try PostgresSchemaContents.read(schema, on: connection).storeTables
                    for table in tables where rootTables.contains(table) {
                        let largest =
                            try connection.scalar(rawSQL: "SELECT coalesce(max(z_pk), 0) FROM \(store).\(table.quotedIdentifier)")?
                            .int64 ?? 0
                        if largest > AssociationIndex.largestIdentityKey { throw Self.keysTooLarge(largest) }
                    }
                    for table in tables {
                        let quoted = table.quotedIdentifier
                        try connection.execute(rawSQL: "\(create) \(copy).\(quoted) (LIKE \(store).\(quoted) INCLUDING ALL)")
                        // Paced tables are copied in chunks of keys below, in this transaction.
                        if throttle == nil || !rootTables.contains(table) {
                            try connection.execute(rawSQL: "INSERT INTO \(copy).\(quoted) SELECT * FROM \(store).\(quoted)")
                        }
                    }
                    return tables
                } catch {
                    (connection as? any InterruptibleConnection)?.rollback()
                    throw error
                }
            }
            do {
                if let throttle {
                    for table in tables where rootTables.contains(table) {
                        try await copyInChunks(table.quotedIdentifier, from: store, to: copy, on: database, throttle: throttle)
                    }
                }
                try await database.writeWithoutTransaction { try $0.execute("COMMIT") }
            } catch {
                _ = try? await database.writeWithoutTransaction { ($0 as? any InterruptibleConnection)?.rollback() }
                throw error
            }
        }
        return url(of: name)
    }

    /// Copies a root table 10 000 keys at a time, pacing each chunk, in the copy's
    /// transaction (its snapshot holds across the pauses).
    private func copyInChunks(
        _ quotedTable: String,
        from store: String,
        to copy: String,
        on database: PostgresDatabase,
        throttle: MigrationThrottle
    ) async throws {
        let chunk: Int64 = 10_000
        let largest = try await database.writeWithoutTransaction {
            try $0.scalar(rawSQL: "SELECT coalesce(max(z_pk), 0) FROM \(store).\(quotedTable)")?.int64 ?? 0
        }
        var after: Int64 = 0
        while after < largest {
            let (from, upTo) = (after, after + chunk)
            let rows = try await database.writeWithoutTransaction { connection in
                try connection.run(
                    rawSQL: "INSERT INTO \(copy).\(quotedTable) SELECT * FROM \(store).\(quotedTable) WHERE z_pk > $1 AND z_pk <= $2",
                    [.integer(from), .integer(upTo)]
                )
            }
            after = upTo
            try await throttle.pace(rows: rows)
        }
    }

    func pendingChanges() async throws -> Int {
        guard let capture else { return 0 }
        return try await session.writeWithoutTransaction { try capture.pendingCount(on: $0) }
    }

    func catchUp(into migrated: StoreURL, limit: Int, migrate: (StoreURL) async throws -> Void) async throws -> Int {
        guard let capture else { return 0 }
        let copySchema = try schema(of: migrated)
        let target = try await targetLayout(of: migrated)
        let changes = try await session.writeWithoutTransaction { connection in
            try connection.execute("BEGIN")
            do {
                return try capture.claim(limit: limit, on: connection)
            } catch {
                (connection as? any InterruptibleConnection)?.rollback()
                throw error
            }
        }
        guard !changes.isEmpty else {
            try await session.writeWithoutTransaction { try $0.execute("COMMIT") }
            return 0
        }
        let roundSchema = PostgresShadowName.new(beside: configuration.schema, kind: .migrating)
        made.insert(roundSchema)
        do {
            let changed = PostgresChangedRows(changes: changes, source: source)
            let storeSchema = configuration.schema
            let rows = try await withSession { database in
                try await database.writeWithoutTransaction { connection in
                    try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                    do {
                        var reached = changed
                        try reached.reach(from: storeSchema, on: connection)
                        guard reached.largestReachedKey <= AssociationIndex.largestIdentityKey else {
                            throw Self.keysTooLarge(reached.largestReachedKey)
                        }
                        try reached.write(
                            into: roundSchema,
                            from: storeSchema,
                            tables: try PostgresSchemaContents.read(storeSchema, on: connection).storeTables,
                            on: connection
                        )
                        try connection.execute("COMMIT")
                        return reached
                    } catch {
                        (connection as? any InterruptibleConnection)?.rollback()
                        throw error
                    }
                }
            }
            try await migrate(url(of: roundSchema))
            let merge = PostgresRoundMerge(source: source, target: target, keys: keys)
            try await session.writeWithoutTransaction { connection in
                try merge.merge(rows, from: roundSchema, into: copySchema, on: connection)
                try connection.execute("COMMIT")
            }
        } catch {
            await DatabaseCancellation.shielded {
                _ = try? await self.session.writeWithoutTransaction { ($0 as? any InterruptibleConnection)?.rollback() }
            }
            await drop(roundSchema)
            throw error
        }
        await drop(roundSchema)
        return changes.count
    }

    /// The copy's statistics (``PostgresStatistics``), and the store's owners and grants
    /// (``PostgresPrivileges``), before the writers are held: changing a table's owner
    /// waits for an autovacuum of it, for as long as the server takes to cancel one. The
    /// cut-over gives only what changed since.
    func readyToServe(_ migrated: StoreURL) async throws {
        let (schema, copySchema) = (configuration.schema, try schema(of: migrated))
        try await PostgresStatistics.analyze(schema: copySchema, on: session, logger: logger, store: store)
        try await session.write { try PostgresPrivileges.read(schema, on: $0).give(to: copySchema, on: $0) }
    }

    func cutOver(
        to migrated: StoreURL,
        lockTimeout: Duration,
        finalCatchUp: () async throws -> Void,
        swapping: @escaping @Sendable () throws -> Void,
        committed: () throws -> Void
    ) async throws -> Bool {
        guard let capture else { return false }
        let copySchema = try schema(of: migrated)
        let holder = try await Self.openSession(configuration, store: store)
        let replaced: String?
        do {
            replaced = try await cutOver(
                holding: holder,
                lockTimeout: lockTimeout,
                copySchema: copySchema,
                finalCatchUp: finalCatchUp,
                swapping: swapping
            )
        } catch {
            await DatabaseCancellation.shielded { await holder.close() }
            throw error
        }
        await holder.close()
        guard let replaced else { return false }
        made.remove(copySchema)
        made.insert(replaced)
        try committed()
        // The old tables and the capture (its triggers are on them) go now, outside the
        // cut-over: dropping a table waits for its readers, which must not hold writers off.
        await drop(replaced)
        await removeCapture(capture)
        self.capture = nil
        return true
    }

    /// The cut-over in `holder`'s transaction: returns the schema the store's old tables
    /// were renamed to, `nil` when a lock was not had in time (nothing changed).
    private func cutOver(
        holding holder: PostgresDatabase,
        lockTimeout: Duration,
        copySchema: String,
        finalCatchUp: () async throws -> Void,
        swapping: @escaping @Sendable () throws -> Void
    ) async throws -> String? {
        let (configuration, store) = (self.configuration, self.store)
        let replaced = PostgresShadowName.new(beside: configuration.schema, kind: .replaced)
        do {
            try await holder.writeWithoutTransaction { connection in
                try connection.execute("BEGIN")
                do {
                    // Every table of the store, the key counter first, as a writer's save
                    // takes them: a writer that counted a key and waits for an entity table
                    // would otherwise wait for this transaction while it waits for the writer.
                    let tables = PostgresSchemaContents.inLockOrder(try PostgresSchemaContents.read(configuration.schema, on: connection).storeTables)
                        .map { PostgresConfiguration.qualifiedName($0, inSchema: configuration.schema) }
                    // First an autovacuum out of the way, which the lock below could not wait
                    // long enough to have cancelled; no one waits for this one.
                    try PostgresChangeCapture.yieldingAutovacuum(tables, on: connection)
                    // Shorter than the server's deadlock check: a writer that holds one table
                    // and waits for one this locked goes on when this lets go, rather than
                    // have its transaction ended by the check.
                    // The whole statement too: it takes the tables one by one, and writers queue
                    // behind the ones it holds while it waits for the next.
                    let milliseconds = try PostgresChangeCapture.shorterThanDeadlockCheck(lockTimeout, on: connection, fraction: 0.8)
                    try connection.run(rawSQL: "SELECT set_config('lock_timeout', $1, true)", [.text("\(milliseconds)ms")])
                    try connection.run(rawSQL: "SELECT set_config('statement_timeout', $1, true)", [.text("\(milliseconds)ms")])
                    try connection.execute(rawSQL: "LOCK TABLE \(tables.joined(separator: ", ")) IN EXCLUSIVE MODE")
                    try connection.run(rawSQL: "SELECT set_config('statement_timeout', '0', true)", [])
                } catch {
                    (connection as? any InterruptibleConnection)?.rollback()
                    throw error
                }
            }
        } catch let error as DatabaseError where Self.isLockInTheWay(error) || (error.sqlState == "57014" && !Task.isCancelled) {
            return nil
        }
        do {
            try await finalCatchUp()
            try await holder.writeWithoutTransaction { connection in
                do {
                    try PostgresSchemaContents.read(configuration.schema, on: connection).refuse(
                        .migrating,
                        configuration: configuration,
                        store: store
                    )
                    // Given before the lock; what changed since (nothing, mostly: two reads).
                    try PostgresPrivileges.read(configuration.schema, on: connection).give(to: copySchema, on: connection)
                    // Renames take no lock on the tables: readers go on throughout.
                    try connection.execute(rawSQL: "ALTER SCHEMA \(configuration.quotedSchema) RENAME TO \(replaced.quotedIdentifier)")
                    try swapping()
                    try connection.execute(
                        rawSQL: "ALTER SCHEMA \(copySchema.quotedIdentifier) RENAME TO \(configuration.quotedSchema)"
                    )
                    try connection.execute("COMMIT")
                } catch {
                    (connection as? any InterruptibleConnection)?.rollback()
                    throw error
                }
            }
        } catch let error as DatabaseError where Self.isLockInTheWay(error) {
            return nil
        }
        return replaced
    }

    func cleanUp() async {
        let (schemas, capture) = (made, self.capture)
        made = []
        self.capture = nil
        await DatabaseCancellation.shielded {
            for schema in schemas { await self.drop(schema) }
            if let capture { await self.removeCapture(capture) }
            await self.session.close()
        }
    }

    /// Drops the capture and its triggers. Readers and writers in the way are waited for a
    /// little at a time; a capture left behind is removed by the next migration.
    private func removeCapture(_ capture: PostgresChangeCapture) async {
        do {
            try await Self.retryingLocks(logger: logger, store: store) {
                try await self.session.write { try capture.remove(on: $0) }
            }
        } catch {
            logger.warning(
                "the change capture could not be removed; the next migration of the store removes it",
                metadata: [
                    LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(capture.captureSchema)", "persistence.error": "\(error)",
                ]
            )
        }
    }

    func abandon() async {
        await session.close()
    }

    // MARK: Helpers

    private func url(of schema: String) -> StoreURL {
        var shadow = configuration
        shadow.schema = schema
        return .postgres(shadow)
    }

    private func schema(of url: StoreURL) throws(MigrationError) -> String {
        guard let configuration = (url.engine as? PostgresEngine)?.configuration else {
            throw MigrationError(.store, "\(url) is not a PostgreSQL schema: a PostgreSQL migration writes schemas only", store: store.description)
        }
        return configuration.schema
    }

    /// Keys above the identity range give migrated objects keys of their own, which a round
    /// could not match with the copy's.
    static func keysTooLarge(_ key: Int64) -> MigrationError {
        OnlineKeyCorrespondence.refusal(
            "the store holds a key of \(key), above \(AssociationIndex.largestIdentityKey): objects with such keys are migrated under keys of their own, which the catch-up cannot match"
        )
    }

    /// The migrated copy's layout, with the entity numbers its migration gave.
    private func targetLayout(of migrated: StoreURL) async throws -> StoreSchema {
        if let target { return target }
        let opened = try await PersistentStore.open(migrated, model: plan.targetVersion, options: .readOnly, logger: logger)
        await opened.close()
        target = opened.schema
        return opened.schema
    }

    /// Runs `body` on a session of its own, closed afterwards.
    private func withSession<T: Sendable>(_ body: (PostgresDatabase) async throws -> T) async throws -> T {
        try await PostgresMigrationSession.with(configuration, store: store, longTransactions: true, body)
    }

    private func drop(_ schema: String) async {
        _ = try? await session.writeWithoutTransaction {
            try $0.execute(rawSQL: "DROP SCHEMA IF EXISTS \(schema.quotedIdentifier) CASCADE")
        }
        made.remove(schema)
    }

    /// Whether the server gave up waiting for a lock (`lock_not_available`, or a deadlock
    /// it broke): the work is tried again.
    static func isLockInTheWay(_ error: DatabaseError) -> Bool {
        error.sqlState == "55P03" || error.sqlState == "40P01"
    }

    /// Runs `body` until no lock is in its way, pausing longer each time, for at most a minute.
    static func retryingLocks(logger: Logger, store: StoreURL, _ body: () async throws -> Void) async throws {
        let deadline = ContinuousClock.now + WriterFencePatience.duration
        var pause = Duration.milliseconds(50)
        while true {
            do {
                return try await body()
            } catch let error as DatabaseError where isLockInTheWay(error) && ContinuousClock.now < deadline {
                logger.debug("other sessions held a lock the online migration needs; trying again", metadata: [LoggingKeys.store: "\(store)"])
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
            }
        }
    }
}
