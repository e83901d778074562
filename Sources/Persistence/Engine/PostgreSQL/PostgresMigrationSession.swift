/// The sessions a migration opens on the store's server: one connection each, a failure to
/// connect said as the store's.
///
/// ```swift
/// let holder = try await PostgresMigrationSession.open(configuration, store: url, longTransactions: true)
/// try await PostgresMigrationSession.with(configuration, store: url) { database in … }   // closed afterwards
/// ```
enum PostgresMigrationSession {
    /// Opens a session. `longTransactions`: its transactions may stay open while other work
    /// runs (a fence held for a step, a round's changes taken while its store migrates), so
    /// neither the server's idle-in-transaction nor its statement timeout applies.
    static func open(
        _ configuration: PostgresConfiguration,
        store: StoreURL,
        isDurable: Bool = true,
        longTransactions: Bool = false
    ) async throws -> PostgresDatabase {
        let database: PostgresDatabase
        do {
            database = try await PostgresDatabase.open(configuration, readerCount: 0, isDurable: isDurable)
        } catch let error as DatabaseError {
            throw StoreError(.connectionFailed, error.message, hint: "check that the server is running and the store URL", store: store.description)
        }
        guard longTransactions else { return database }
        do {
            try await database.writeWithoutTransaction { try $0.execute("SET idle_in_transaction_session_timeout = 0; SET statement_timeout = 0") }
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    /// Runs `body` on a new session, closed afterwards whatever happens.
    static func with<T: Sendable>(
        _ configuration: PostgresConfiguration,
        store: StoreURL,
        isDurable: Bool = true,
        longTransactions: Bool = false,
        _ body: (PostgresDatabase) async throws -> T
    ) async throws -> T {
        let database = try await open(configuration, store: store, isDurable: isDurable, longTransactions: longTransactions)
        do {
            let result = try await body(database)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }
}
