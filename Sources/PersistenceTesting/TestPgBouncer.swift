import Dispatch
import Foundation
import Persistence

/// PgBouncer, Debian's `pgbouncer` package, in front of the test server: one pooler per pool
/// mode, started on first use and stopped when the process exits, for the tests of a store
/// reached as most deployments of several replicas reach PostgreSQL.
///
/// ```swift
/// let database = try await TestPostgres.makeDatabase()
/// let pooled = try await TestPgBouncer.url(of: database, mode: .transaction)
/// // postgres://postgres@127.0.0.1:PORT/persistence_test_…, each transaction on any server session
/// ```
///
/// Each database's pool has few server sessions in transaction mode (``poolSize(_:)``), so that a test's clients
/// share them and a statement that relies on its session meets another's. Without the
/// package the tests fail saying how to install it.
public enum TestPgBouncer {
    /// Server sessions per database (and user) in transaction mode: fewer than a store's
    /// connections. In session mode each client holds one, so there are as many as a
    /// store, its migration and a test's own connections take.
    public static func poolSize(_ mode: PostgresConfiguration.PoolMode) -> Int { mode == .session ? 40 : 3 }

    /// The URL of `database`'s `public` schema through the pooler in `mode`.
    public static func url(of database: TestPostgresDatabase, mode: PostgresConfiguration.PoolMode) async throws -> StoreURL {
        try await url(for: database.url, mode: mode)
    }

    /// The store at `direct`, a URL of the test server's, through the pooler in `mode`: the
    /// same database and schema.
    public static func url(for direct: StoreURL, mode: PostgresConfiguration.PoolMode) async throws -> StoreURL {
        guard case .postgres(var configuration) = direct.kind else { throw TestPostgresError("\(direct) is not a store of the test server") }
        let pooler = try await Pooler.shared(mode)
        configuration.host = "127.0.0.1"
        configuration.port = pooler.port
        configuration.password = nil
        return .postgres(configuration)
    }

    /// Runs `body` with the URL of a new, empty database through the pooler in `mode` and its
    /// URL on the server itself (as a migration takes it), dropped afterwards.
    public static func withDatabase<T>(
        mode: PostgresConfiguration.PoolMode = .transaction,
        _ body: (_ pooled: StoreURL, _ direct: StoreURL) async throws -> T
    ) async throws -> T {
        let database = try await TestPostgres.makeDatabase()
        do {
            let result = try await body(try await url(of: database, mode: mode), database.url)
            try await database.drop()
            return result
        } catch {
            try? await database.drop()
            throw error
        }
    }

    /// A running pgbouncer.
    struct Pooler: Sendable {
        let port: Int

        private static let started = (
            session: Task<Result<Pooler, TestPostgresError>, Never> { await start(.session) },
            transaction: Task<Result<Pooler, TestPostgresError>, Never> { await start(.transaction) },
            statement: Task<Result<Pooler, TestPostgresError>, Never> { await start(.statement) }
        )

        static func shared(_ mode: PostgresConfiguration.PoolMode) async throws -> Pooler {
            switch mode {
            case .session: try await started.session.value.get()
            case .transaction: try await started.transaction.value.get()
            case .statement: try await started.statement.value.get()
            }
        }

        private static func start(_ mode: PostgresConfiguration.PoolMode) async -> Result<Pooler, TestPostgresError> {
            let server: PostgresConfiguration
            do {
                server = try await TestPostgres.Server.shared.value.get().configuration
            } catch {
                return .failure(error)
            }
            return await withCheckedContinuation { continuation in
                DispatchQueue(label: "persistence.testing.pgbouncer.start").async {
                    continuation.resume(returning: Result { () throws(TestPostgresError) in try start(mode, in: server) })
                }
            }
        }

        private static func start(_ mode: PostgresConfiguration.PoolMode, in server: PostgresConfiguration) throws(TestPostgresError) -> Pooler {
            guard let binary = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
                throw TestPostgresError(
                    "pgbouncer is not installed, which the tests of a store behind a connection pooler start (Debian/Ubuntu: `apt-get install pgbouncer`, or run scripts/setup.sh)"
                )
            }
            // PgBouncer refuses to run as root, as the server does.
            let owner = try ThrowawayPostgresServer.serverUser()
            var template = Array("/tmp/persistence-pgbouncer-XXXXXX".utf8CString)
            guard let created = mkdtemp(&template) else {
                throw TestPostgresError("cannot create a temporary folder for pgbouncer: \(String(cString: strerror(errno)))")
            }
            let folder = String(cString: created)
            if let owner { chown(folder, owner.uid, owner.gid) }
            let port = try ThrowawayPostgresServer.freePort()
            var target = "host=\(server.host ?? "127.0.0.1") port=\(server.port ?? 5432)"
            if let user = server.user { target += " user=\(user)" }
            if let password = server.password { target += " password=\(password)" }
            let configuration = """
                [databases]
                * = \(target)

                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = \(port)
                unix_socket_dir =
                auth_type = trust
                auth_file = \(folder)/users.txt
                pool_mode = \(mode.rawValue)
                default_pool_size = \(poolSize(mode))
                max_client_conn = 4000
                logfile = \(folder)/pgbouncer.log
                pidfile = \(folder)/pgbouncer.pid

                """
            let users = "\"\(server.user ?? "postgres")\" \"\"\n"
            do {
                try configuration.write(toFile: folder + "/pgbouncer.ini", atomically: true, encoding: .utf8)
                try users.write(toFile: folder + "/users.txt", atomically: true, encoding: .utf8)
            } catch {
                throw TestPostgresError("cannot write pgbouncer's configuration in \(folder): \(error)")
            }
            for file in ["/pgbouncer.ini", "/users.txt"] { if let owner { chown(folder + file, owner.uid, owner.gid) } }
            let runAs = owner != nil ? "/usr/sbin/runuser -u postgres -- " : ""
            let quote = ThrowawayPostgresServer.Cleanup.quote
            // SIGKILL: pgbouncer keeps the signal mask of the thread that started it, and the
            // test process's threads block SIGTERM, so a SIGTERM would stay pending for ever.
            ThrowawayPostgresServer.Cleanup.register(
                "\(runAs)/bin/sh -c \(quote("kill -KILL $(cat \(quote(folder + "/pgbouncer.pid")))")) >/dev/null 2>&1; rm -rf \(quote(folder))"
            )
            // `-d` goes on in the background before it listens: ready once it takes a connection.
            let result = ThrowawayPostgresServer.run([binary, "-d", folder + "/pgbouncer.ini"], asPostgres: owner != nil)
            let deadline = ContinuousClock.now + .seconds(30)
            while result.status == 0, !accepts(port) {
                guard ContinuousClock.now < deadline else { break }
                usleep(20_000)
            }
            guard result.status == 0, accepts(port) else {
                let log = (try? String(contentsOfFile: folder + "/pgbouncer.log", encoding: .utf8)) ?? ""
                throw TestPostgresError("pgbouncer could not start: \(result.output) \(log.suffix(2000))")
            }
            return Pooler(port: port)
        }

        /// Whether something listens on 127.0.0.1:`port`.
        private static func accepts(_ port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = ThrowawayPostgresServer.loopback(port: port)
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
    }
}
