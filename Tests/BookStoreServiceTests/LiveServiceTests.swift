import BookStoreTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Persistence
import PersistenceTesting
import ServiceLifecycle
import Synchronization
import Testing

@testable import BookStoreService

/// The service over real sockets: TCP, a Unix domain socket, and the `bookstore serve`
/// executable stopped with SIGTERM.
@Suite("live service")
struct LiveServiceTests {
    @Test(arguments: TestEngine.allCases)
    func servesOverTCP(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await seed(url)
            try await makeService(url).makeApplication().test(.live) { client in
                try await waitUntilReady(client)
                #expect(client.port.map { $0 > 0 } == true)
                let list = try await client.send(.get, "/publications?limit=2")
                #expect(list.status == .ok && list.json["items"]?.array.count == 2 && list.json["total"]?.int == 4)
                let created = try await client.send(.post, "/publications", json: #"{"title": "Over TCP", "price": 3.5}"#)
                #expect(created.status == .created)
                expectProblem(try await client.send(.post, "/publications", json: #"{"title": "#), .badRequest)
                expectProblem(try await client.send(.get, "/publications/404"), .notFound)
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func servesOverAUnixDomainSocket(_ backend: TestEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        try await backend.withStoreURL { url in
            try await seed(url)
            let socket = directory.appendingPathComponent("bookstore.sock").path
            let application = try makeService(url, address: .unixSocket(path: socket)).makeApplication()
            let group = ServiceGroup(configuration: .init(services: [application], logger: quietLogger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                defer { tasks.cancelAll() }
                let health = try await waitUntilHealthy(.unixSocket(socket))
                #expect(health.body.contains(#""status":"ok""#))
                let list = try await RawHTTPClient.send("GET", "/publications", to: .unixSocket(socket))
                #expect(list.status == 200 && list.body.contains("The fourth book"))
                #expect(list.headers["x-request-id"]?.isEmpty == false)
                let refused = try await RawHTTPClient.send("POST", "/publications", to: .unixSocket(socket), body: #"{"title": 1}"#)
                #expect(refused.status == 400 && refused.headers["content-type"] == "application/problem+json")
                await group.triggerGracefulShutdown()
                try await tasks.next()
            }
        }
    }

    /// What SIGINT and SIGTERM start: a request whose body is still arriving when the
    /// shutdown begins is answered and its publication saved; new connections are refused
    /// meanwhile; then the service stops.
    @Test(arguments: TestEngine.allCases)
    func aRequestInFlightFinishesWhenTheServiceStops(backend: TestEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let socket = directory.appendingPathComponent("bookstore.sock").path
        try await backend.withStoreURL { url in
            try await seed(url)
            let log = LogRecorder()
            // The body's clock ten minutes rather than 30 s: what may end the request here is
            // the shutdown, not a loaded machine's slow steps between the body's two halves.
            var configuration = try makeService(url, address: .unixSocket(path: socket), logger: log.logger).configuration
            configuration.timeouts = HTTPTimeouts(requestBody: .seconds(600))
            let application = try BookStoreService(configuration: configuration, logger: log.logger).makeApplication()
            let group = ServiceGroup(configuration: .init(services: [application], logger: quietLogger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                defer { tasks.cancelAll() }
                _ = try await waitUntilHealthy(.unixSocket(socket))

                // The head and half the body; the handler is then waiting for the rest.
                let body = #"{"title": "In flight", "price": 7.5}"#
                let half = body.utf8.count / 2
                let connection = try await RawHTTPClient.onThread { try RawHTTPClient.Connection(to: .unixSocket(socket)) }
                try await RawHTTPClient.onThread {
                    try connection.write(
                        "POST /publications HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + String(body.utf8.prefix(half))!
                    )
                }
                try await log.waitFor("request started POST /publications") {
                    $0.contains("request started") && $0.contains("http.method=POST") && $0.contains("http.path=/publications")
                }

                await group.triggerGracefulShutdown()
                // The listener closes first: a new connection is refused while the request is under way.
                // Five minutes bound a hang: the in-process service shares the test process's
                // two cooperative threads with every test running beside it.
                let deadline = ContinuousClock.now + .seconds(300)
                while (try? RawHTTPClient.Connection(to: .unixSocket(socket))) != nil, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(
                    (try? RawHTTPClient.Connection(to: .unixSocket(socket))) == nil,
                    "the server still accepts connections after the shutdown began"
                )

                let response = try await RawHTTPClient.onThread { () throws -> RawHTTPClient.Response in
                    try connection.write(String(body.utf8.dropFirst(half))!)
                    return try connection.readResponse()
                }
                #expect(response.status == 201, "\(response.body)")
                try await tasks.next()
            }
            // Saved for good: the store, opened afresh after the service closed it, has it.
            let models = try loadModels()
            let container = try await PersistentContainer.open(model: models.current, store: url, logger: quietLogger)
            let titles = try await container.newContext().fetch(FetchRequest(entityName: "Publication")).map { $0.value(forKey: "title").stringValue }
            await container.store.close()
            #expect(titles.contains("In flight"))
            #expect(titles.count == 5)
        }
    }

    /// The issue's check, end to end: `bookstore serve` on a version 1 store migrates it,
    /// `/health` turns 200, the books are listed with synopses and names, refusals are
    /// problems, a valid POST is 201; SIGTERM stops it cleanly.
    @Test(arguments: TestEngine.allCases)
    func theExecutableServesAVersion1StoreAndStopsOnSIGTERM(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await copyFixture(version: 1, to: url)
            let server = try ServerProcess(["serve", "--store", url.description, "--port", "0"])
            defer { server.kill() }
            let port = try await server.port()
            var health: RawHTTPClient.Response?
            // Five minutes bound a hang (a migration that never ends), not a slow one; one
            // more look after the time is up.
            let deadline = ContinuousClock.now + .seconds(300)
            while true {
                health = try await RawHTTPClient.send("GET", "/health", to: .tcp(port: port))
                guard health?.status != 200, ContinuousClock.now < deadline else { break }
                #expect(health?.status == 503)
                // Polling pace only.
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(health?.status == 200, "not ready five minutes after it listened: \(health?.body ?? "")")
            #expect(
                health.flatMap { try? JSONValue(parsing: Data($0.body.utf8)) } == [
                    "status": "ok", "model": "BookStore 5", "store": .string(backend.rawValue),
                ]
            )
            let list = try await RawHTTPClient.send("GET", "/publications", to: .tcp(port: port))
            // Version 1 knew no authors: firstName and lastName are there, null; the synopsis is the title.
            let items = try JSONValue(parsing: Data(list.body.utf8))["items"]?.array ?? []
            #expect(items.map { $0["title"]?.string ?? "" } == ["The first book", "The second book", "The third book", "The fourth book"])
            #expect(items.allSatisfy { $0["synopsis"] == $0["title"] && $0["firstName"] == .null && $0["lastName"] == .null })
            let malformed = try await RawHTTPClient.send("POST", "/publications", to: .tcp(port: port), body: #"{"title": "#)
            #expect(malformed.status == 400 && malformed.headers["content-type"] == "application/problem+json")
            #expect(try await RawHTTPClient.send("GET", "/publications/12345", to: .tcp(port: port)).status == 404)
            #expect(try await RawHTTPClient.send("POST", "/publications", to: .tcp(port: port), body: #"{"title": "Live"}"#).status == 201)

            let status = try await server.terminate()
            #expect(status == 0, "\(server.output)")
            // Every stage is logged with its step (and the stages of mappings with their rows).
            let stages = server.output.split(separator: "\n").filter { $0.contains("migration stage") }
            #expect(stages.count >= 10)
            #expect(stages.allSatisfy { $0.contains("persistence.migration.step=") && $0.contains("persistence.duration_ms=") })
            #expect(
                stages.contains { $0.contains("persistence.migration.entity_mapping=PublicationToPublication") && $0.contains("persistence.rows=4") }
            )
            #expect(server.output.contains("hb.request.id="))
        }
    }
}

/// `bookstore serve` in a process of its own, its output collected.
final class ServerProcess: Sendable {
    private let process: WatchedProcess

    /// `small`: it runs where that file system is mounted, for a store on it.
    init(_ arguments: [String], on small: SmallFileSystem? = nil) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BOOKSTORE_STORE"] = nil
        environment["BOOKSTORE_MIGRATION_STORE"] = nil
        environment["BOOKSTORE_WRITE_KEY_FILE"] = nil
        process = try WatchedProcess(try Self.executable, arguments, environment: environment, on: small)
    }

    var output: String { process.output }

    /// The port from the server's "listening on http://127.0.0.1:PORT" line. The output is
    /// looked at once more after the time is up: a test process kept from running past the
    /// deadline (two cooperative threads shared by every test) still finds a line that came.
    /// Five minutes bound a hang, not a slow start.
    func port(timeout: Duration = .seconds(300)) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = output.split(separator: "\n").first(where: { $0.contains("listening on http://") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) })
            {
                return port
            }
            guard process.isRunning, ContinuousClock.now < deadline else { break }
            // Polling pace only: the loop waits for the line.
            try await Task.sleep(for: .milliseconds(20))
        }
        throw RawHTTPClient.Failure(description: "the server did not say where it listens within \(timeout): \(output)")
    }

    /// Waits for an output line that satisfies `predicate`, throwing with the output when
    /// none came within `timeout` or the server ended.
    func waitForLine(_ what: String, timeout: Duration = .seconds(60), _ predicate: @escaping (Substring) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !output.split(separator: "\n").contains(where: predicate) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw RawHTTPClient.Failure(description: "no line \(what) within \(timeout); the server wrote:\n\(output.suffix(3000))")
            }
            // Polling pace only: the loop waits for the line.
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Sends SIGTERM and waits for the exit status.
    func terminate(timeout: Duration = .seconds(60)) async throws -> Int32 {
        process.signal(SIGTERM)
        return try await waitForExit(timeout: timeout)
    }

    /// Waits for the process to end by itself; its exit status (128 + a signal that ended
    /// it), with its output read to the end.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        guard let status = await process.waitUntilExit(timeout: timeout) else {
            throw RawHTTPClient.Failure(description: "the server did not stop within \(timeout); it wrote:\n\(output.suffix(3000))")
        }
        return status
    }

    /// The process's peak resident set (`VmHWM` in `/proc/PID/status`), in bytes.
    func peakResidentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.identifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw RawHTTPClient.Failure(description: "no VmHWM in /proc/\(process.identifier)/status") }
        return kilobytes * 1024
    }

    func kill() {
        process.signal(SIGKILL)
    }

    /// The built `bookstore` executable.
    static var executable: URL {
        get throws { try BookStoreTestSupport.executable() }
    }
}

/// Polls `/health` until it answers 200 (the store open and current). Five minutes at
/// most, as ``waitUntilReady(_:timeout:)``: the limit catches a service that never gets
/// healthy, not a slow one on a loaded machine.
func waitUntilHealthy(_ target: RawHTTPClient.Target, timeout: Duration = .seconds(300)) async throws -> RawHTTPClient.Response {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let health = try? await RawHTTPClient.send("GET", "/health", to: target), health.status == 200 { return health }
        guard ContinuousClock.now < deadline else { throw RawHTTPClient.Failure(description: "/health did not answer 200 within \(timeout)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
