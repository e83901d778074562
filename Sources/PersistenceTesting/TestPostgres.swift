import Dispatch
import Foundation
import Persistence

/// PostgreSQL for tests: a fresh, empty database per test, on the server that
/// `BOOKSTORE_TEST_POSTGRES_URL` names or, without it, on a throwaway server this process
/// starts on first use (see ``ThrowawayPostgresServer``) and stops when it exits.
///
/// ```swift
/// @Test func savesOnPostgreSQL() async throws {
///     try await TestPostgres.withDatabase { url in
///         let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
///         …
///         await container.store.close()
///     }
/// }
/// ```
///
/// When there is no server and none can be started, every call throws a
/// ``TestPostgresError`` that says how to get one, so the tests fail rather than skip.
public enum TestPostgres {
    /// The environment variable naming a server to use instead of a throwaway one: a
    /// `postgres://` URL whose user may create and drop databases.
    public static let environmentVariable = "BOOKSTORE_TEST_POSTGRES_URL"

    /// A new, empty database; ``TestPostgresDatabase/drop()`` removes it.
    public static func makeDatabase() async throws -> TestPostgresDatabase {
        let server = try await Server.shared.value.get()
        let name = "persistence_test_" + UUID().uuidString.prefix(13).lowercased().replacingOccurrences(of: "-", with: "_")
        try await server.administer("CREATE DATABASE \(name.quotedIdentifier)")
        var configuration = server.configuration
        configuration.database = name
        return TestPostgresDatabase(configuration: configuration, server: server)
    }

    /// Runs `body` with the URL of a new, empty database, dropped afterwards even if `body`
    /// throws (its connections are ended first).
    public static func withDatabase<T>(_ body: (StoreURL) async throws -> T) async throws -> T {
        let database = try await makeDatabase()
        do {
            let result = try await body(database.url)
            try await database.drop()
            return result
        } catch {
            try? await database.drop()
            throw error
        }
    }

    /// The server all of a process's test databases live on, found or started once.
    final class Server: Sendable {
        /// Where test databases are created; their configuration but for the database name.
        let configuration: PostgresConfiguration
        private let queue = DispatchQueue(label: "persistence.testing.postgres.admin")
        // Touched only on `queue`.
        private nonisolated(unsafe) let admin: PostgresConnection

        private init(configuration: PostgresConfiguration, admin: PostgresConnection) {
            self.configuration = configuration
            self.admin = admin
        }

        /// Started on first use; a failure is kept, so every test reports it without retrying.
        static let shared = Task<Result<Server, TestPostgresError>, Never> {
            await withCheckedContinuation { continuation in
                DispatchQueue(label: "persistence.testing.postgres.start").async {
                    continuation.resume(returning: Result { () throws(TestPostgresError) in try start() })
                }
            }
        }

        private static func start() throws(TestPostgresError) -> Server {
            var configuration: PostgresConfiguration
            if let url = ProcessInfo.processInfo.environment[environmentVariable], !url.isEmpty {
                do {
                    configuration = try PostgresConfiguration(url: url)
                } catch {
                    throw TestPostgresError("\(environmentVariable) is not a PostgreSQL URL: \(error.message)")
                }
            } else {
                let server = try ThrowawayPostgresServer.start()
                configuration = PostgresConfiguration(host: "127.0.0.1", port: server.port, user: server.superuser, database: "postgres")
            }
            configuration.connectTimeout = 5
            do {
                return Server(configuration: configuration, admin: try PostgresConnection(configuration: configuration))
            } catch {
                throw TestPostgresError(error.message)
            }
        }

        /// Runs an administrative statement (CREATE or DROP DATABASE), one at a time.
        func administer(_ sql: String) async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                queue.async {
                    continuation.resume(with: Result { try self.admin.execute(rawSQL: sql) })
                }
            }
        }
    }
}

/// A database of its own for one test.
public struct TestPostgresDatabase: Sendable {
    /// How to reach the database: the test server, with this database's name.
    public let configuration: PostgresConfiguration
    let server: TestPostgres.Server

    /// The store URL of the database's `public` schema.
    public var url: StoreURL { .postgres(configuration) }

    /// Drops the database, ending any session still connected to it.
    public func drop() async throws {
        guard let name = configuration.database else { return }
        try await server.administer("DROP DATABASE IF EXISTS \(name.quotedIdentifier) WITH (FORCE)")
    }
}

extension TestPostgresDatabase {
    /// A new database holding a copy of this one, made by the server in one step
    /// (`CREATE DATABASE … TEMPLATE`): the same store, for running several migrations on
    /// identical data. Nothing may be connected to this database meanwhile.
    ///
    /// ```swift
    /// let seeded = try await TestPostgres.makeDatabase()
    /// // … write a store into seeded.url …
    /// let copy = try await seeded.copy()
    /// ```
    public func copy() async throws -> TestPostgresDatabase {
        guard let template = configuration.database else { throw TestPostgresError("the database to copy has no name") }
        let name = "persistence_test_" + UUID().uuidString.prefix(13).lowercased().replacingOccurrences(of: "-", with: "_")
        try await server.administer(
            "CREATE DATABASE \(name.quotedIdentifier) TEMPLATE \(template.quotedIdentifier)"
        )
        var copied = configuration
        copied.database = name
        return TestPostgresDatabase(configuration: copied, server: server)
    }
}

extension TestPostgres {
    /// Runs `body` with a new database whose files live in a tablespace at `folder` on this
    /// machine (a ``SmallFileSystem``, to make the server's disk fill up under a store);
    /// drops both afterwards. Needs the throwaway server, which runs on this machine as the
    /// `postgres` user when the tests run as root.
    public static func withDatabase<T>(inTablespaceAt folder: URL, _ body: (StoreURL) async throws -> T) async throws -> T {
        let database = try await makeDatabase()
        let tablespace = "persistence_test_space_" + UUID().uuidString.prefix(8).lowercased()
        let location = folder.appendingPathComponent(tablespace)
        do {
            try FileManager.default.createDirectory(at: location, withIntermediateDirectories: true)
            if let owner = getpwnam("postgres") { _ = chown(location.path, owner.pointee.pw_uid, owner.pointee.pw_gid) }
            try await database.server.administer("CREATE TABLESPACE \(tablespace) LOCATION '\(location.path)'")
            guard let name = database.configuration.database else { throw TestPostgresError("the test database has no name") }
            try await database.server.administer("ALTER DATABASE \(name.quotedIdentifier) SET TABLESPACE \(tablespace)")
            let result = try await body(database.url)
            try await database.drop()
            try? await database.server.administer("DROP TABLESPACE IF EXISTS \(tablespace)")
            return result
        } catch {
            try? await database.drop()
            try? await database.server.administer("DROP TABLESPACE IF EXISTS \(tablespace)")
            throw error
        }
    }
}
