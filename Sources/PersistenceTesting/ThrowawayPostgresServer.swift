import Foundation
import Synchronization

/// A PostgreSQL server of the test process's own: `initdb` into a temporary folder, started
/// with `pg_ctl` on 127.0.0.1 and a free port, trusting every local connection, and
/// stopped and removed when the process exits, however it exits.
///
/// Debian keeps `initdb` and `pg_ctl` in `/usr/lib/postgresql/<version>/bin`, off the
/// PATH; both places are searched. PostgreSQL refuses to run as root, so under root the
/// server runs as the `postgres` user (`runuser -u postgres`) and owns its folder.
struct ThrowawayPostgresServer: Sendable {
    let port: Int
    /// The temporary folder: data, log and Unix socket.
    let folder: String
    let superuser = "postgres"

    /// Starts a server; blocks for the few seconds `initdb` and start-up take.
    ///
    /// - Parameters:
    ///   - settings: more `-c name=value` settings (a TLS server's `ssl=on` and files).
    ///   - accessRules: the server's `pg_hba.conf` in place of `initdb`'s (trust every local
    ///     connection), such as a TLS server's `hostssl` lines.
    ///   - prepare: runs on the new folder before the server starts (files it reads).
    static func start(
        settings: [String] = [],
        accessRules: String? = nil,
        prepare: (_ folder: String, _ owner: (uid: uid_t, gid: gid_t)?) throws(TestPostgresError) -> Void = { _, _ in }
    )
        throws(TestPostgresError) -> ThrowawayPostgresServer
    {
        let binaries = try findBinaries()
        let owner = try serverUser()
        var template = Array("/tmp/persistence-postgres-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw TestPostgresError("cannot create a temporary folder for the server: \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: created)
        if let owner { chown(folder, owner.uid, owner.gid) }
        // The watchdog first, so even a process killed during start-up leaves nothing behind.
        Cleanup.register(binaries: binaries, folder: folder, asPostgres: owner != nil)

        let data = folder + "/data"
        let log = folder + "/server.log"
        var initdb = ["\(binaries)/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]
        // A UTF-8 locale, so lower() folds beyond ASCII; the C locale where there is none.
        if run(initdb + ["--locale=C.UTF-8"], asPostgres: owner != nil).status != 0 {
            _ = run(["/bin/rm", "-rf", data], asPostgres: owner != nil)
            initdb.append("--no-locale")
            let result = run(initdb, asPostgres: owner != nil)
            guard result.status == 0 else { throw TestPostgresError("initdb failed: \(result.output.suffix(2000))") }
        }
        if let accessRules {
            do {
                try accessRules.write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
            } catch {
                throw TestPostgresError("cannot write the server's pg_hba.conf: \(error)")
            }
        }
        try prepare(folder, owner)
        var lastFailure = ""
        for _ in 0..<3 {
            let port = try freePort()
            let options =
                ([
                    "-c listen_addresses=127.0.0.1", "-p \(port)", "-k \(folder)",
                    // A test server needs no durability, and many test databases run at once, each
                    // with a writer, readers and a migration's sessions: hundreds at a busy moment.
                    "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=1000",
                ] + settings.map { "-c \($0)" }).joined(separator: " ")
            let result = run(["\(binaries)/pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "-o", options, "start"], asPostgres: owner != nil)
            if result.status == 0 { return ThrowawayPostgresServer(port: port, folder: folder) }
            let serverLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            lastFailure = "\(result.output) \(serverLog.suffix(2000))"
        }
        throw TestPostgresError("pg_ctl could not start the server: \(lastFailure)")
    }

    /// The folder holding `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/*/bin`, else the PATH's.
    private static func findBinaries() throws(TestPostgresError) -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for folder in versions.map({ "\(root)/\($0)/bin" }) + path {
            if FileManager.default.isExecutableFile(atPath: folder + "/initdb"), FileManager.default.isExecutableFile(atPath: folder + "/pg_ctl") {
                return folder
            }
        }
        throw TestPostgresError("initdb and pg_ctl are not installed (looked in \(root)/*/bin and the PATH)")
    }

    /// The `postgres` user to run the server as when this process is root; `nil` otherwise.
    static func serverUser() throws(TestPostgresError) -> (uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("postgres") else {
            throw TestPostgresError("running as root, the server must run as the 'postgres' user, and there is none")
        }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// A port no one listens on now (the kernel's pick).
    static func freePort() throws(TestPostgresError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestPostgresError("cannot open a socket to find a free port") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestPostgresError("cannot find a free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// 127.0.0.1:`port` (0: the kernel's pick).
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    /// Runs a command to its end, as the `postgres` user when asked; its status and output.
    ///
    /// A ``ChildProcess``: it gets no descriptor of this process but its output file, so the
    /// server it starts never holds a socket or pipe of a test (a connection the service
    /// closed would otherwise stay open for as long as the server runs).
    static func run(_ arguments: [String], asPostgres: Bool) -> (status: Int32, output: String) {
        let command = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + arguments : arguments
        let outputPath = "/tmp/persistence-postgres-output-\(getpid())-\(UUID().uuidString)"
        defer { unlink(outputPath) }
        guard FileManager.default.createFile(atPath: outputPath, contents: nil), let output = FileHandle(forWritingAtPath: outputPath) else {
            return (-1, "cannot create \(outputPath)")
        }
        defer { try? output.close() }
        let termination: ChildProcess.Termination
        do {
            termination = try ChildProcess(
                executable: URL(fileURLWithPath: command[0]),
                arguments: Array(command.dropFirst()),
                output: output,
                error: output
            ).waitUntilExit()
        } catch {
            return (-1, "\(error)")
        }
        return (termination.shellStatus, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }

    /// Stops the server (and whatever else registered, a pooler in front of it) and removes
    /// its folder when the process exits: an `atexit` hook for a normal exit, and a watchdog
    /// in a session of its own for a process killed outright.
    enum Cleanup {
        /// Shell commands run at exit, the last registered first.
        private static let commands = Mutex<[String]>([])

        static func register(binaries: String, folder: String, asPostgres: Bool) {
            let stop =
                (asPostgres ? "/usr/sbin/runuser -u postgres -- " : "")
                + "\(quote(binaries + "/pg_ctl")) stop -D \(quote(folder + "/data")) -m immediate"
            register("\(stop) >/dev/null 2>&1; rm -rf \(quote(folder))")
        }

        /// Runs `script` when the process exits, however it exits.
        static func register(_ script: String) {
            let isFirst = commands.withLock { commands in
                commands.append(script)
                return commands.count == 1
            }
            if isFirst {
                atexit {
                    for script in ThrowawayPostgresServer.Cleanup.commands.withLock({ $0 }).reversed() { _ = system(script) }
                }
            }
            // In a session of its own and detached (the shell's `&`), so neither a signal to this
            // process group nor this process's end stops it before it has cleaned up.
            let watchdog = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(script)"
            _ = run(["/bin/sh", "-c", "/usr/bin/setsid /bin/sh -c \(quote(watchdog)) </dev/null >/dev/null 2>&1 &"], asPostgres: false)
        }

        static func quote(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
    }
}
