import Foundation
import Logging

/// Migrates a PostgreSQL store (a schema) step by step, each step whole or not at all.
///
/// One migrator at a time holds the ``PostgresMigrationLock``, and other writers are held
/// off by the ``PostgresWriterFence`` (the store's tables locked against writes) while each
/// step reads and until its result is in: they wait, then write into what the step left.
///
/// - In-place steps run as ALTER statements in the fence's transaction in the schema.
/// - Set-based and streamed steps build the next version in a shadow schema beside it
///   (`<schema>_migrating_<id>`), then swap it in with two schema renames and a drop, in
///   the fence's transaction.
///
/// A failure or a killed process leaves the store whole at the version of its last
/// completed step; the next run (under the lock) drops abandoned shadow schemas and
/// completes the migration. A plan with a step that writes a new store is refused while the
/// schema holds anything but the store, which the swap would drop (``PostgresSchemaContents``).
struct PostgresMigrationBackend: MigrationBackend {
    let store: StoreURL
    let configuration: PostgresConfiguration

    func acquireLock(timeout: Duration, logger: Logger, orStoreAt destination: ManagedObjectModel?) async throws -> MigrationLockWait {
        try await PostgresMigrationLock.acquire(configuration: configuration, store: store, timeout: timeout, logger: logger, orStoreAt: destination)
    }

    /// An offline run leaves nothing once the store is migrated (the last swap's transaction
    /// drops what it made beside the store, and the advisory lock goes with the session); an
    /// online run killed after its cut-over committed leaves the old tables and its change
    /// capture, which it drops after the commit. One query for schemas named as those are.
    func hasLeftoversOfKilledRuns() async -> Bool {
        let schema = configuration.schema
        let found = try? await PostgresMigrationSession.with(configuration, store: store) { database in
            try await database.writeWithoutTransaction { connection in
                let names = try connection.rows("SELECT nspname FROM pg_namespace ORDER BY nspname").compactMap { $0[0].text }
                return !PostgresShadowName.Kind.allCases.allSatisfy { PostgresShadowName.named($0, beside: schema, in: names).isEmpty }
            }
        }
        return found ?? false
    }

    var onlineRefusal: MigrationError? { nil }

    func prepareOnlineWorkspace(for plan: MigrationPlan, keys: OnlineKeyCorrespondence, logger: Logger) async throws -> any OnlineMigrationWorkspace {
        try await PostgresOnlineWorkspace.prepare(store: store, configuration: configuration, plan: plan, keys: keys, logger: logger)
    }

    func prepareWorkspace(for plan: MigrationPlan, logger: Logger) async throws -> any MigrationWorkspace {
        let fence = try await PostgresWriterFence.open(configuration, store: store, logger: logger)
        let workspace = PostgresMigrationWorkspace(store: store, configuration: configuration, fence: fence)
        do {
            if plan.steps.contains(where: { $0.strategy != .inPlace }) {
                try await workspace.refuseOtherObjectsInTheSchema(fence.holder)
            }
            // Kept until the run knows whether it continues one of them.
            try await workspace.findAbandonedShadows()
            try await workspace.removeAbandonedCaptures()
        } catch {
            await fence.release()
            throw error
        }
        return workspace
    }
}

/// The schemas of one PostgreSQL migration: the store's, and a shadow per step that
/// writes a new store.
final class PostgresMigrationWorkspace: MigrationWorkspace {
    let store: StoreURL
    let configuration: PostgresConfiguration
    /// Holds other writers off, and runs what changes the store.
    let fence: PostgresWriterFence
    /// The shadow schemas of killed runs beside the store, which this run may continue,
    /// until ``removeAbandoned()``.
    private var abandonedShadows: [String] = []
    /// What else killed runs left (shadows beside shadows, replaced tables), removed by
    /// ``removeAbandoned()``.
    private var otherLeftovers: [String] = []
    /// The new stores of steps that failed or were fused away, dropped once the fence lets go.
    private var discarded: [String] = []
    private var logger: Logger { fence.logger }
    /// Whether the store is served once migrated, so gets the planner's statistics and the
    /// store's owners and grants: not an online migration's copy or round store, which the
    /// online run readies itself, once.
    private var servesAfter: Bool { !PostgresShadowName.isMigrationWorkspace(configuration.schema) }

    init(store: StoreURL, configuration: PostgresConfiguration, fence: PostgresWriterFence) {
        self.store = store
        self.configuration = configuration
        self.fence = fence
    }

    func holdWriters() async throws {
        try await fence.hold()
    }

    /// In-place steps, in the fence's transaction; a table they make gets the owner and
    /// grants of the store's (``PostgresPrivileges``), and every table the planner's
    /// statistics (``PostgresStatistics``): the next step's reads, and the service after,
    /// plan by them.
    func writeStore(_ body: @escaping @Sendable (any DatabaseConnection) throws -> Void) async throws {
        let (schema, servesAfter, logger, store) = (configuration.schema, servesAfter, logger, store)
        try await fence.commit { connection in
            let privileges = servesAfter ? try PostgresPrivileges.read(schema, on: connection) : nil
            try body(connection)
            try privileges?.give(to: schema, on: connection)
            try PostgresStatistics.analyzeInTransaction(schema: schema, on: connection, logger: logger, store: store)
        }
    }

    var storeAfterFailure: String { "the store is whole at the version of its last completed step" }

    /// Indexes kept up while writing: rows arrive in key order, which a B-tree appends
    /// cheaply, while building an index afterwards reads the whole new table once more
    /// (measured by the benchmark: streamed steps slower with deferred indexes).
    var outputOptions: PersistentStore.Options {
        var options = PersistentStore.Options.workspace
        options.defersIndexes = false
        return options
    }

    /// The schema of `url`: the store's own, or a shadow.
    private func configuration(of url: StoreURL) throws(MigrationError) -> PostgresConfiguration {
        guard let configuration = (url.engine as? PostgresEngine)?.configuration else {
            throw MigrationError(.store, "\(url) is not a PostgreSQL schema: a PostgreSQL migration writes schemas only", store: store.description)
        }
        return configuration
    }

    func inPlaceTarget(from current: StoreURL, firstStep: Int) async throws -> (url: StoreURL, isStore: Bool) {
        (store, true)
    }

    func newOutput(forStep index: Int) -> StoreURL {
        var shadow = configuration
        shadow.schema = PostgresShadowName.new(beside: configuration.schema, kind: .migrating)
        return .postgres(shadow)
    }

    /// The shadow schema becomes the store in the fence's transaction, with the owners and
    /// grants of the store's schema and tables (``PostgresPrivileges``); the old tables go
    /// with it. Writers waiting on them go on, on the new tables, once it commits. The old
    /// tables and schema are dropped without CASCADE: anything else that depends on them
    /// stops the swap, and the store stays as it was.
    func swapIn(_ output: StoreURL, replacing current: StoreURL, swapping: @escaping @Sendable () throws -> Void) async throws -> StoreURL {
        let schema = configuration.quotedSchema
        let old = (PostgresShadowName.new(beside: configuration.schema, kind: .replaced)).quotedIdentifier
        let shadowName = try configuration(of: output).schema
        let shadow = shadowName.quotedIdentifier
        let configuration = self.configuration
        let store = self.store
        // Readied to serve before the swap: the planner's statistics (``PostgresStatistics``),
        // and the store's owners and grants (changing a table's owner waits for an
        // autovacuum of it; the swap gives what changed since).
        // Not for an online run's copy or round store (``servesAfter``): a round's swap may
        // run in the cut-over.
        let (servesAfter, logger) = (servesAfter, self.logger)
        if servesAfter {
            try await withDatabase(output, isDurable: false) { database in
                try await PostgresStatistics.analyze(schema: shadowName, on: database, logger: logger, store: store)
                try await database.write { try PostgresPrivileges.read(configuration.schema, on: $0).give(to: shadowName, on: $0) }
            }
        }
        try await fence.commit { connection in
            // Checked before the first step too; this covers objects made since.
            let contents = try PostgresSchemaContents.read(configuration.schema, on: connection)
            try contents.refuse(.migrating, configuration: configuration, store: store)
            if servesAfter { try PostgresPrivileges.read(configuration.schema, on: connection).give(to: shadowName, on: connection) }
            try connection.execute(rawSQL: "ALTER SCHEMA \(schema) RENAME TO \(old)")
            try swapping()
            try connection.execute(rawSQL: "ALTER SCHEMA \(shadow) RENAME TO \(schema)")
            if !contents.storeTables.isEmpty {
                try connection.execute(
                    rawSQL: "DROP TABLE \(contents.storeTables.map { "\(old).\(($0).quotedIdentifier)" }.joined(separator: ", "))"
                )
            }
            try connection.execute(rawSQL: "DROP SCHEMA \(old)")
        }
        return store
    }

    /// Refuses a migration whose steps replace the store's schema while it holds objects
    /// that are not the store's: they would go with it (``PostgresSchemaContents``).
    func refuseOtherObjectsInTheSchema(_ database: any Database) async throws {
        let configuration = self.configuration
        let store = self.store
        try await database.writeWithoutTransaction { connection in
            try PostgresSchemaContents.read(configuration.schema, on: connection).refuse(.migrating, configuration: configuration, store: store)
        }
    }

    /// Drops a step's new store at once, on a session of its own while the fence holds
    /// writers off (in the fence's transaction the drop would be rolled back with it), else on
    /// the fence's session. A new session may not start on a full disk: it first rewrites the
    /// database's relation cache file when the steps' DDL made it stale, as happens when no
    /// other session has started since. The drop is then made on the fence's session, open
    /// since before the run wrote anything, once the fence lets go.
    func discard(_ output: StoreURL) async {
        guard let schema = try? configuration(of: output).schema else { return }
        guard fence.isHeld else { return await drop(schema) }
        do {
            try await withDatabase(store, isDurable: true) { database in
                _ = try await database.writeWithoutTransaction {
                    try $0.execute(rawSQL: "DROP SCHEMA IF EXISTS \(schema.quotedIdentifier) CASCADE")
                }
            }
        } catch {
            logger.debug(
                "a new session could not remove a store this migration made; the fence's session removes it once it lets go",
                metadata: [
                    LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(schema)", "persistence.error": "\(error)",
                ]
            )
            discarded.append(schema)
        }
    }

    private func dropDiscarded() async {
        let schemas = discarded
        discarded = []
        for schema in schemas { await drop(schema) }
    }

    private func drop(_ schema: String) async {
        do {
            _ = try await fence.holder.writeWithoutTransaction {
                try $0.execute(rawSQL: "DROP SCHEMA IF EXISTS \(schema.quotedIdentifier) CASCADE")
            }
        } catch {
            // The session lost, say: the store is whole, and the next run removes what is
            // left beside it. Said, so that nobody wonders what it is.
            logger.warning(
                "could not remove a store this migration made beside the store; the next migration removes it",
                metadata: [
                    LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(schema)", "persistence.error": "\(error)",
                ]
            )
        }
    }

    /// Nothing left: each step was swapped in, in the fence's transaction, which never lets
    /// the writers' lock go.
    func finish(
        with current: StoreURL,
        lockLetGo: @escaping @Sendable () throws -> Void,
        swapping: @escaping @Sendable () throws -> Void
    ) async throws {}

    func cleanUp() async {
        await fence.letGo()
        await dropDiscarded()
        await fence.release()
        await removeAbandoned()
    }

    func abandon() async {
        await fence.letGo()
        await dropDiscarded()
        await fence.release()
    }

    func withDatabase<T: Sendable>(_ url: StoreURL, isDurable: Bool, _ body: (any Database) async throws -> T) async throws -> T {
        try await PostgresMigrationSession.with(try configuration(of: url), store: store, isDurable: isDurable) { try await body($0) }
    }

    /// The change captures killed online runs left, whose triggers would otherwise record
    /// every write of the store from now on, and go on firing on tables this migration
    /// changes. Readers and writers in the way of their triggers' removal are waited for a
    /// little at a time (``PostgresChangeCapture/removeAbandoned(beside:lockTimeout:on:)``),
    /// for a minute at most.
    ///
    /// - Throws: ``MigrationError/Code/storeBusy`` when they stayed in the way.
    func removeAbandonedCaptures() async throws {
        let (schema, store, logger) = (configuration.schema, self.store, self.logger)
        do {
            try await PostgresOnlineWorkspace.retryingLocks(logger: logger, store: store) {
                let removed = try await self.withDatabase(store, isDurable: true) { database in
                    try await database.write { try PostgresChangeCapture.removeAbandoned(beside: schema, on: $0) }
                }
                for name in removed {
                    logger.notice(
                        "removed the change capture of an interrupted online migration",
                        metadata: [LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(name)"]
                    )
                }
            }
        } catch let error as DatabaseError where PostgresOnlineWorkspace.isLockInTheWay(error) {
            throw MigrationError(
                .storeBusy,
                "other sessions kept the store's tables for \(WriterFencePatience.duration): the change capture an interrupted online migration left cannot be removed",
                hint: "nothing was changed; run the migration again once long transactions on the store have ended",
                store: store.description,
                underlying: error
            )
        }
    }

    /// Only a step's output beside the store itself may be continued: what lies beside
    /// another shadow (a migration run on an online migration's copy) recorded its marks on
    /// that copy, not on the store, and is removed with the rest.
    func findAbandonedShadows() async throws {
        let schema = configuration.schema
        let (all, direct) = try await withDatabase(store, isDurable: true) { database in
            try await database.read { connection in
                let names = try connection.rows("SELECT nspname FROM pg_namespace ORDER BY nspname").compactMap { $0[0].text }
                return (
                    try PostgresShadowName.leftovers(beside: schema, on: connection), PostgresShadowName.named(.migrating, beside: schema, in: names)
                )
            }
        }
        abandonedShadows = direct
        otherLeftovers = all.filter { !direct.contains($0) }
    }

    var abandonedOutputs: [StoreURL] {
        abandonedShadows.map { name in
            var shadow = configuration
            shadow.schema = name
            return .postgres(shadow)
        }
    }

    /// A shadow schema is continued where it is.
    func adopt(_ output: StoreURL, forStep index: Int) async throws -> StoreURL {
        let schema = try configuration(of: output).schema
        abandonedShadows.removeAll { $0 == schema }
        return output
    }

    func removeAbandoned() async {
        // Nested shadows first: each belongs to one beside the store.
        let (names, store, logger) = (otherLeftovers + abandonedShadows, self.store, self.logger)
        abandonedShadows = []
        otherLeftovers = []
        guard !names.isEmpty else { return }
        try? await withDatabase(store, isDurable: true) { database in
            for name in names {
                _ = try await database.writeWithoutTransaction {
                    try $0.execute(rawSQL: "DROP SCHEMA IF EXISTS \(name.quotedIdentifier) CASCADE")
                }
                logger.notice(
                    "removed the shadow schema of an interrupted migration",
                    metadata: [LoggingKeys.store: "\(store)", "persistence.migration.schema": "\(name)"]
                )
            }
        }
    }

    /// The oldest transaction still running when the mark is taken (with writers held off),
    /// and for each of the store's tables its rows and a digest of the place and
    /// transaction of each row written by that transaction or a later one. A row written
    /// since, by anyone (a subtransaction of a transaction that was running too, whose id
    /// is later still), is such a row in a new place; a row deleted changes the count.
    func sourceMark(of current: StoreURL) async throws -> String? {
        guard try configuration(of: current).schema == configuration.schema else { return nil }
        let schema = configuration.schema
        return try await withDatabase(store, isDurable: true) { database in
            try await database.read { connection in
                // As 64-bit ids; rows carry their low 32 bits.
                let oldest = try connection.scalar("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")?.text.flatMap { UInt64($0) } ?? 0
                return "\(oldest & 0xFFFF_FFFF) " + (try Self.rowsMark(of: schema, since: oldest & 0xFFFF_FFFF, on: connection))
            }
        }
    }

    func storeUnchanged(since mark: String) async throws -> Bool {
        let parts = mark.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, let oldest = UInt64(parts[0]) else { return false }
        let schema = configuration.schema
        return try await withDatabase(store, isDurable: true) { database in
            try await database.read { connection in try Self.rowsMark(of: schema, since: oldest, on: connection) == parts[1] }
        }
    }

    /// Nothing: the output becomes the store when it is swapped in, and the next step takes
    /// the store's own mark.
    func recordFinished(_ output: StoreURL, fingerprint: String, sourceMark: String) async throws {}

    /// None: a finished step is committed into the store.
    var finishedOutputs: [FinishedOutput] { [] }

    var recordsFinishedOutputs: Bool { false }

    /// Per table: its rows, and the digest of rows written by transaction `oldest` or later
    /// (`age` compares transaction ids modulo 2^32, as the server does).
    private static func rowsMark(of schema: String, since oldest: UInt64, on connection: any DatabaseConnection) throws -> String {
        var marks: [String] = []
        for table in try PostgresSchemaContents.tableNames(in: schema, on: connection) {
            let name = PostgresConfiguration.qualifiedName(table, inSchema: schema)
            let row = try connection.rows(
                rawSQL: """
                    SELECT count(*), coalesce(md5(string_agg(ctid::text || ':' || xmin::text, ',' ORDER BY ctid) \
                    FILTER (WHERE age(xmin) <= age($1::text::xid))), '') FROM \(name)
                    """,
                [.text(String(oldest))]
            ).first
            marks.append("\(table)=\(row?[0].int64 ?? -1):\(row?[1].text ?? "")")
        }
        return marks.joined(separator: ",")
    }
}
