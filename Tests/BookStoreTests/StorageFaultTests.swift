import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Errors the store's surroundings cause — a full disk, a read-only folder, a damaged file,
/// a path that is no file — are said as such: the store named, what happened, what to do;
/// never "report this" or Foundation's raw text; the store is left whole.
@Suite("errors of the store's surroundings")
struct StorageFaultTests {
    static let generated = 5_000

    /// What no message about the environment may say.
    static func expectNoBugReportOrRawText(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("report this"), "\(text)", sourceLocation: sourceLocation)
        #expect(!text.contains("NSCocoaErrorDomain"), "\(text)", sourceLocation: sourceLocation)
        #expect(!text.contains("Code="), "\(text)", sourceLocation: sourceLocation)
    }

    @Test(arguments: TestEngine.allCases)
    func aFullDiskFailsTheMigrationSayingSoAndTheNextRunCompletesOnceThereIsSpace(engine: TestEngine) async throws {
        let small = try SmallFileSystem(bytes: 64 << 20)
        defer { small.unmount() }
        switch engine {
        case .sqlite:
            let url = StoreURL.sqlite(small.folder.appendingPathComponent("bookstore.sqlite").path)
            try await runOutOfSpace(url, small: small)
        case .postgres:
            try await TestPostgres.withDatabase(inTablespaceAt: small.folder) { url in try await runOutOfSpace(url, small: small) }
        }
    }

    private func runOutOfSpace(_ url: StoreURL, small: SmallFileSystem) async throws {
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--count", "\(Self.generated)", "--store", store], on: small)
        #expect(seed.status == 0, "\(seed.stderr)")
        let before = try await StoreSnapshot(url)
        // Room for some of the migration's writes, not for all of them: on PostgreSQL, for
        // the server's cache file of the database too (a session cannot start without it).
        let sqlite = if case .sqlite = url.kind { true } else { false }
        try small.fill(leaving: sqlite ? 600 << 10 : (1 << 20) + (try await Self.postgresTableBytes(url)) / 3)

        let failed = try await BookStoreProcess.running(["migrate", "--store", store, "--log-level", "warning"], on: small)
        #expect(failed.status == 1, "\(failed.stdout)\(failed.stderr)")
        let message = failed.stderr
        #expect(message.contains("error: \(store): the disk is full: "), "\(message)")
        #expect(message.contains("Free space on the disk that holds the store"), "\(message)")
        Self.expectNoBugReportOrRawText(message)
        // A new PostgreSQL session may have to write the database's cache file, which the
        // migration's DDL made stale, and the failed migration took the room left for it:
        // a megabyte back lets the checks connect, and changes nothing in the store.
        if !sqlite { try small.release(1 << 20) }
        // Whole: SQLite as it was; PostgreSQL at its last completed step; nothing beside it.
        // (On PostgreSQL the failed step's schema is dropped on the migration's own session,
        // open since before the disk filled: a new session may not start on a full disk.)
        let leftovers = try await StoreSnapshot(url).leftovers.filter { $0 != "filler" }
        #expect(leftovers.isEmpty, "left beside the store: \(leftovers)\n\(failed.stderr)")
        #expect(!failed.stderr.contains("the next migration removes it"), "\(failed.stderr)")
        if sqlite {
            let after = try await StoreSnapshot(url)
            #expect(after.files[after.name] == before.files[before.name], "the store file changed")
        }
        let status = try await BookStoreProcess.running(["status", "--store", store], on: small)
        #expect(status.status == 0, "\(status.stderr)")

        small.empty()
        let again = try await BookStoreProcess.running(["migrate", "--store", store, "--log-level", "error"], on: small)
        #expect(again.status == 0, "\(again.stderr)")
        let leftAfter = try await StoreSnapshot(url).leftovers.filter { $0 != "filler" }
        #expect(leftAfter.isEmpty, "left beside the store after the next run: \(leftAfter)")
        let counts =
            "SELECT (SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE), (SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL)"
        if case .sqlite(let path) = url.kind {
            // Through the sqlite3 shell where the file system is mounted (SQLite in this
            // process would not find a store on it when it is mounted without root).
            let query = try await BuiltCommand(systemTool: "sqlite3").runningOn(small).run([path, counts])
            #expect(
                query.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.generated + 4)|\(2 * Self.generated + 12)",
                "\(query.stderr)"
            )
        } else {
            let rows = try await PersistentStore.inspect(url) { try $0.rows(rawSQL: counts).map(\.values) }
            #expect(rows.first?.map(\.int64) == [Int64(Self.generated + 4), Int64(2 * Self.generated + 12)])
        }
    }

    /// SQLite: the store's own folder turns read-only; a PostgreSQL server's files are the server's.
    @Test func aReadOnlyFolderIsSaidNamingTheStoreAndServeRefusesItBeforeListening() async throws {
        let small = try SmallFileSystem(bytes: 16 << 20)
        defer { small.unmount() }
        let url = StoreURL.sqlite(small.folder.appendingPathComponent("bookstore.sqlite").path)
        let store = url.description
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--store", store], on: small)
        #expect(seed.status == 0, "\(seed.stderr)")
        try small.setReadOnly(true)
        defer { try? small.setReadOnly(false) }

        let migrate = try await BookStoreProcess.running(["migrate", "--store", store], on: small)
        #expect(migrate.status == 1)
        #expect(migrate.stderr.contains("error: \(store): the store or its folder cannot be written"), "\(migrate.stderr)")
        #expect(migrate.stderr.contains("Read-only file system"), "\(migrate.stderr)")
        Self.expectNoBugReportOrRawText(migrate.stderr)

        let serve = try WatchedProcess(try BookStoreProcess.executable, ["serve", "--store", store, "--port", "0"], on: small)
        // A serve that did not refuse would listen until stopped: the bound catches that,
        // however slow the machine (what proves "before listening" is the output below).
        let status = await serve.waitUntilExit(timeout: Self.hangBound)
        let output = serve.output
        #expect(status == 1, "\(output)")
        #expect(output.contains("error: \(store): the store file cannot be written: Read-only file system"), "\(output)")
        #expect(!output.contains("listening"), "\(output)")
        #expect(!output.contains("CancellationError"), "\(output)")
    }

    /// SQLite: the store file's bytes are overwritten, which only a file store allows.
    @Test func aDamagedStoreIsSaidAsSuch() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = sqliteStoreURL(in: directory)
        let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--count", "500", "--store", url.description])
        #expect(seed.status == 0, "\(seed.stderr)")
        guard case .sqlite(let path) = url.kind else {
            Issue.record("not a SQLite store: \(url.kind)")
            return
        }
        // The schema's page intact, the rest overwritten.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 8_192)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 60_000))
        try handle.close()
        for command in ["status", "migrate"] {
            let result = try await BookStoreProcess.running([command, "--store", url.description])
            #expect(result.status == 1, "\(command): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("error: \(url.description): the store is damaged or not a database"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("Restore the store from a backup"), "\(command): \(result.stderr)")
            Self.expectNoBugReportOrRawText(result.stderr)
        }
    }

    /// A FIFO made `status`, `migrate` and `serve` wait forever for a writer (and `serve`
    /// then ignored SIGTERM); a folder, a socket and a device are no store either.
    @Test(arguments: ["fifo", "folder", "socket", "device"])
    func aStorePathThatIsNotARegularFileIsRefusedAtOnce(kind: String) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        var path = directory.appendingPathComponent("store.sqlite").path
        let what: String
        switch kind {
        case "fifo":
            #expect(mkfifo(path, 0o644) == 0)
            what = "a FIFO (named pipe)"
        case "folder":
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            what = "a directory"
        case "socket":
            try Self.bindSocket(at: path)
            what = "a socket"
        default:
            path = "/dev/null"
            what = "a device"
        }
        let store = "sqlite://\(path)"
        for arguments in [["status"], ["migrate"], ["serve", "--port", "0"]] {
            let process = try WatchedProcess(try BookStoreProcess.executable, arguments + ["--store", store])
            // Nothing ever writes the FIFO (or connects to the socket, or listens to the
            // device): a command that waited for one would wait forever, so it refused without
            // waiting if it ended at all. The bound only ends a hang; it does not time the
            // refusal, which a busy machine may take a while to reach.
            let status = await process.waitUntilExit(timeout: Self.hangBound)
            let output = process.output
            #expect(status == 1, "\(arguments[0]) did not refuse at once: \(output)")
            #expect(output.contains("error: \(store): \(path) is \(what), not a store file"), "\(arguments[0]): \(output)")
            #expect(!output.contains("listening"), "\(arguments[0]): \(output)")
        }
    }

    /// How long a command that should end by itself may take before it is taken for hung:
    /// long enough for a debug build on a loaded machine, short of forever.
    static let hangBound: Duration = .seconds(300)

    /// What the store's tables take on the server's disk, their indexes included.
    private static func postgresTableBytes(_ url: StoreURL) async throws -> Int {
        try await PersistentStore.inspect(url) { connection in
            Int(
                try connection.scalar(
                    """

                    SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                    WHERE n.nspname = current_schema() AND c.relkind = 'r'
                    """
                )?.int64 ?? 0
            )
        }
    }

    private static func bindSocket(at path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            path.utf8CString.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(buffer.count))) }
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0, "could not bind a socket at \(path)")
    }
}
