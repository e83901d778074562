import Logging

/// One migrator at a time per PostgreSQL store: a session-level advisory lock keyed by the
/// database and schema, held on a connection of its own for the whole migration. Others
/// wait (bounded), logging the holder's process id, application and client address.
final class PostgresMigrationLock: MigrationLock, Sendable {
    private let database: PostgresDatabase
    private let key: String

    private init(database: PostgresDatabase, key: String) {
        self.database = database
        self.key = key
    }

    /// Waits up to `timeout` for the lock, or, given a `destination`, until the store is
    /// at it: its metadata is read on the waiting session each time the lock is tried
    /// (every 100 ms), a read no lock of a migration keeps waiting for longer than a swap.
    static func acquire(
        configuration: PostgresConfiguration,
        store: StoreURL,
        timeout: Duration,
        logger: Logger,
        orStoreAt destination: ManagedObjectModel? = nil
    ) async throws -> MigrationLockWait {
        let database: PostgresDatabase
        do {
            database = try await PostgresDatabase.open(configuration, readerCount: 0)
        } catch let error as DatabaseError {
            throw StoreError(.connectionFailed, error.message, hint: "check that the server is running and the store URL", store: store.description)
        }
        let key = "persistence.migration:\(configuration.schema)"
        let deadline = ContinuousClock.now + timeout
        var announced = false
        do {
            if try await !database.keepsSession {
                return try await waitThroughPooler(
                    database,
                    key: key,
                    store: store,
                    deadline: deadline,
                    timeout: timeout,
                    logger: logger,
                    orStoreAt: destination
                )
            }
            while true {
                let locked = try await database.writeWithoutTransaction { connection in
                    try connection.scalar(rawSQL: "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", [.text(key)])?.int64 == 1
                }
                if locked { return .acquired(PostgresMigrationLock(database: database, key: key)) }
                // A read that fails (the store's tables mid-swap) is made again next time.
                if let destination, let metadata = try? await database.writeWithoutTransaction({ try StoreMetadata.read(from: $0) }),
                    destination.isCompatible(with: metadata)
                {
                    await database.close()
                    return .storeReached
                }
                // Who holds it: for the first notice and the timeout's error only.
                let timedOut = ContinuousClock.now >= deadline
                guard !announced || timedOut else {
                    try await Task.sleep(for: .milliseconds(100))
                    continue
                }
                let holder = await holder(of: key, on: database)
                let who = holder ?? "another session"
                guard !timedOut else {
                    throw MigrationError(
                        .storeBusy,
                        "another migration of the store is running (\(who)) and did not finish in \(timeout)",
                        hint: "wait for it to finish, or stop it; the store was not changed",
                        store: store.description
                    )
                }
                if !announced {
                    logger.notice(
                        "waiting for another migration of the store to finish",
                        metadata: [LoggingKeys.store: "\(store)", "persistence.migration.holder": "\(who)"]
                    )
                    announced = true
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        } catch {
            await database.close()
            throw error
        }
    }

    /// Behind a pooler in transaction mode the lock would belong to whichever server session
    /// the statement got, and stay there for anyone: no migration runs through it. One that
    /// another process runs over a direct URL (its lock held) is waited for until the store
    /// is at `destination`; with none running, the migration is refused before it writes.
    private static func waitThroughPooler(
        _ database: PostgresDatabase,
        key: String,
        store: StoreURL,
        deadline: ContinuousClock.Instant,
        timeout: Duration,
        logger: Logger,
        orStoreAt destination: ManagedObjectModel?
    ) async throws -> MigrationLockWait {
        var announced = false
        while true {
            if let destination, let metadata = try? await database.read({ try StoreMetadata.read(from: $0) }),
                destination.isCompatible(with: metadata)
            {
                await database.close()
                return .storeReached
            }
            let holder = await holder(of: key, on: database)
            guard holder != nil, destination != nil else {
                throw MigrationError(
                    .needsDirectConnection,
                    "the store URL reaches PostgreSQL through a connection pooler in transaction mode, and a migration holds a session lock for its whole run, which the pooler would hand to other clients between transactions",
                    hint:
                        "migrate over a URL that reaches the server directly, or a pooler in session mode (pool_mode=session); the store was not changed",
                    store: store.description
                )
            }
            guard ContinuousClock.now < deadline else {
                throw MigrationError(
                    .storeBusy,
                    "another migration of the store is running (\(holder ?? "another session")) and did not finish in \(timeout)",
                    hint: "wait for it to finish, or stop it; the store was not changed",
                    store: store.description
                )
            }
            if !announced {
                logger.notice(
                    "waiting for another migration of the store to finish",
                    metadata: [LoggingKeys.store: "\(store)", "persistence.migration.holder": "\(holder ?? "another session")"]
                )
                announced = true
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Who holds the lock (its server process, application and client), `nil` when no one
    /// does or it cannot be read.
    private static func holder(of key: String, on database: PostgresDatabase) async -> String? {
        (try? await database.writeWithoutTransaction { connection in
            try connection.rows(
                rawSQL: """
                    SELECT a.pid, a.application_name, coalesce(host(a.client_addr), 'local') FROM pg_locks l \
                    JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted \
                    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                    AND (l.classid::bigint << 32 | l.objid::bigint) = hashtextextended($1, 0) LIMIT 1
                    """,
                [.text(key)]
            ).first.map { row in
                let application = row[1].text.flatMap { $0.isEmpty ? nil : "\($0), " } ?? ""
                return "server process \(row[0].int64 ?? 0), \(application)client \(row[2].text ?? "unknown")"
            }
        }) ?? nil
    }

    /// Gives the lock up; closing the session would too, even if the process dies.
    func release() async {
        let key = self.key
        _ = try? await database.writeWithoutTransaction { try $0.scalar(rawSQL: "SELECT pg_advisory_unlock(hashtextextended($1, 0))", [.text(key)]) }
        await database.close()
    }

    /// Ends the session without unlocking: the server drops the lock with it.
    func abandon() async {
        await database.close()
    }
}
