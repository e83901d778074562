import BookStoreTesting
import Foundation
import PersistenceTesting
import ServiceLifecycle
import Testing

@testable import BookStoreService

/// Connections over real sockets under slow, idle and old clients: each is closed when its
/// time is up (with a 408 problem for a request that was under way), an HTTP/1.0 request
/// without keep-alive closes its connection, and SIGTERM does not wait for a slow upload.
///
/// Connection handling lives in the HTTP layer, below any store: the service runs on a
/// SQLite store, which stands for both engines.
///
/// The clock under test is 2 s and every other clock ten minutes, and the test waits up to a
/// minute for the close: closed within the minute means closed by the clock under test,
/// however slowly a loaded machine runs the test.
@Suite("connections")
struct ConnectionTests {
    /// The service on a TCP port of its own, with `timeouts`.
    private func withLiveService(
        _ timeouts: HTTPTimeouts,
        log: LogRecorder = LogRecorder(),
        _ body: @escaping @Sendable (RawHTTPClient.Target) async throws -> Void
    ) async throws {
        try await TestEngine.sqlite.withStoreURL { url in
            try await seed(url)
            var configuration = try makeService(url, logger: log.logger).configuration
            configuration.timeouts = timeouts
            let application = try BookStoreService(configuration: configuration, logger: log.logger).makeApplication()
            let group = ServiceGroup(configuration: .init(services: [application], logger: quietLogger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                defer { tasks.cancelAll() }
                let port = try await Self.listeningPort(in: log)
                _ = try await waitUntilHealthy(.tcp(port: port))
                try await body(.tcp(port: port))
                await group.triggerGracefulShutdown()
                try await tasks.next()
            }
        }
    }

    /// The port of the "listening on http://127.0.0.1:PORT" line.
    private static func listeningPort(in log: LogRecorder) async throws -> Int {
        try await log.waitFor("listening") { $0.contains("listening on http://") }
        let line = log.all.first { $0.contains("listening on http://") } ?? ""
        guard let port = line.split(separator: ":").dropFirst(2).first.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            throw RawHTTPClient.Failure(description: "no port in \(line)")
        }
        return port
    }

    private func connect(_ target: RawHTTPClient.Target, sending text: String) async throws -> RawHTTPClient.Connection {
        try await RawHTTPClient.onThread {
            let connection = try RawHTTPClient.Connection(to: target)
            if !text.isEmpty { try connection.write(text) }
            return connection
        }
    }

    private func read(_ connection: RawHTTPClient.Connection, for timeout: Duration) async throws -> (text: String, closed: Bool) {
        try await RawHTTPClient.onThread { connection.readUntilClosed(timeout: timeout) }
    }

    @Test func anIdleConnectionIsClosed() async throws {
        try await withLiveService(HTTPTimeouts(idle: .seconds(2), requestHead: .seconds(600), requestBody: .seconds(600))) { target in
            let silent = try await connect(target, sending: "")
            let (text, closed) = try await read(silent, for: .seconds(60))
            #expect(closed, "the connection was still open a minute after it was made")
            #expect(text.isEmpty)
            // Between requests too: after an answer, a kept-alive connection has its idle time.
            let kept = try await connect(target, sending: "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let after = try await read(kept, for: .seconds(60))
            #expect(after.text.hasPrefix("HTTP/1.1 200"), "\(after.text)")
            #expect(after.closed)
        }
    }

    @Test func aSlowHeadIsA408AndItsConnectionIsClosed() async throws {
        try await withLiveService(HTTPTimeouts(idle: .seconds(600), requestHead: .seconds(2), requestBody: .seconds(600))) { target in
            let slow = try await connect(target, sending: "GET /health HTTP/1.1\r\nHost: localhost\r\n")
            let (text, closed) = try await read(slow, for: .seconds(60))
            #expect(closed, "the connection was still open a minute after a head that never ended")
            #expect(text.hasPrefix("HTTP/1.1 408"), "\(text)")
            #expect(text.lowercased().contains("content-type: application/problem+json"))
            #expect(text.contains(#""type":"/problems/request-timeout""#) && text.contains("head"))
        }
    }

    /// On a kept-alive connection, after an answered request: the next request's clock.
    @Test func aSlowHeadAfterAnAnsweredRequestIsA408Too() async throws {
        try await withLiveService(HTTPTimeouts(idle: .seconds(600), requestHead: .seconds(2), requestBody: .seconds(600))) { target in
            let connection = try await connect(target, sending: "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let first = try await RawHTTPClient.onThread { try connection.readOneResponse() }
            #expect(first.hasPrefix("HTTP/1.1 200"), "\(first)")
            try await RawHTTPClient.onThread { try connection.write("GET /health HTTP/1.1\r\nHost: local") }
            let (text, closed) = try await read(connection, for: .seconds(60))
            #expect(text.hasPrefix("HTTP/1.1 408"), "\(text)")
            #expect(closed)
        }
    }

    @Test func aSlowBodyIsA408ItsConnectionIsClosedAndNothingIsLoggedAsAnError() async throws {
        let log = LogRecorder()
        try await withLiveService(HTTPTimeouts(idle: .seconds(600), requestHead: .seconds(600), requestBody: .seconds(2)), log: log) { target in
            let slow = try await connect(
                target,
                sending: "POST /publications HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{\"title\": "
            )
            let (text, closed) = try await read(slow, for: .seconds(60))
            #expect(closed, "the connection was still open a minute after a body that never ended")
            #expect(text.hasPrefix("HTTP/1.1 408"), "\(text)")
            #expect(text.contains("body"))
            let health = try await RawHTTPClient.send("GET", "/publications", to: target)
            #expect(health.status == 200 && !health.body.contains("title\": "), "nothing was created")
            try await log.waitFor("the cut request's log line") { $0.contains("http.path=/publications") && $0.contains("http.method=POST") }
            #expect(!log.all.contains { $0.hasPrefix("error") }, "\(log.all.filter { $0.hasPrefix("error") })")
            #expect(!log.all.contains { $0.contains("http.status=500") })
        }
    }

    @Test func anHTTP10RequestWithoutKeepAliveClosesItsConnection() async throws {
        try await withLiveService(HTTPTimeouts(idle: .seconds(60))) { target in
            let old = try await connect(target, sending: "GET /health HTTP/1.0\r\n\r\n")
            let (text, closed) = try await read(old, for: .seconds(60))
            #expect(text.contains(" 200 "), "\(text)")
            #expect(closed, "an HTTP/1.0 request without keep-alive left its connection open")
            // Asking for keep-alive keeps it: a second request on the same connection is answered.
            let keptAlive = try await connect(target, sending: "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let first = try await RawHTTPClient.onThread { try keptAlive.readOneResponse() }
            #expect(first.contains(" 200 "), "\(first)")
            try await RawHTTPClient.onThread { try keptAlive.write("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n") }
            let second = try await read(keptAlive, for: .seconds(60))
            #expect(second.text.contains(" 200 ") && second.closed, "\(second)")
        }
    }

    @Test func requestsTheServerCannotReadAreAnsweredWithAProblem() async throws {
        try await withLiveService(HTTPTimeouts()) { target in
            for (request, status) in [
                ("NOT HTTP AT ALL\r\n\r\n", 400),
                ("GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n", 431),
                ("POST /publications HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n{}", 400),
                ("GET /\(String(repeating: "p", count: 100_000)) HTTP/1.1\r\nHost: localhost\r\n\r\n", 431),
            ] {
                let connection = try await connect(target, sending: request)
                let (text, closed) = try await read(connection, for: .seconds(60))
                #expect(text.hasPrefix("HTTP/1.1 \(status)"), "\(request.prefix(40)): \(text)")
                #expect(text.lowercased().contains("content-type: application/problem+json"), "\(request.prefix(40)): \(text)")
                #expect(text.contains(#""status":\#(status)"#), "\(text)")
                #expect(closed)
            }
        }
    }

    @Test func aSecondServerOnALiveUnixSocketIsRefusedAndAStaleOneIsReplaced() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let socket = directory.appendingPathComponent("bookstore.sock").path
        try await TestEngine.sqlite.withStoreURL { url in
            try await seed(url)
            let first = try makeService(url, address: .unixSocket(path: socket)).makeApplication()
            let group = ServiceGroup(configuration: .init(services: [first], logger: quietLogger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                defer { tasks.cancelAll() }
                _ = try await waitUntilHealthy(.unixSocket(socket))
                let second = try makeService(url, address: .unixSocket(path: socket))
                let error = await #expect(throws: ServiceStartError.self) { try await second.run() }
                #expect(error?.description.contains("unix:\(socket)") == true && error?.description.contains("--unix-socket") == true)
                #expect(try await RawHTTPClient.send("GET", "/health", to: .unixSocket(socket)).status == 200, "the first server still answers")
                await group.triggerGracefulShutdown()
                try await tasks.next()
            }
        }
        // A socket file nobody listens on any more (its server was killed) is replaced.
        let stale = socket + ".stale"
        let descriptor = try #require(Self.boundSocket(at: stale))
        close(descriptor)
        #expect(FileManager.default.fileExists(atPath: stale))
        try BookStoreService.removeStaleSocket(at: stale)
        #expect(!FileManager.default.fileExists(atPath: stale))
    }

    @Test func aTCPAddressInUseIsSaidInWords() async throws {
        try await withLiveService(HTTPTimeouts()) { target in
            guard case .tcp(let port) = target else { return }
            try await TestEngine.sqlite.withStoreURL { url in
                try await seed(url)
                let second = try makeService(url, address: .tcp(host: "127.0.0.1", port: port))
                let error = await #expect(throws: ServiceStartError.self) { try await second.run() }
                #expect(
                    error?.description
                        == "cannot listen on http://127.0.0.1:\(port): another process is listening there; stop it, or pick another --port (or --host)"
                )
            }
        }
    }

    /// A Unix domain socket bound at `path` (and not listening), or nil.
    private static func boundSocket(at path: String) -> Int32? {
        guard var address = unixSocketAddress(path) else { return nil }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// SIGTERM with an upload that never ends: the server waits out its grace period, cuts
    /// the request and exits 0, without logging it as a failure.
    @Test func aSlowUploadDoesNotHoldUpShutdownPastTheGracePeriod() async throws {
        try await TestEngine.sqlite.withStoreURL { url in
            try await seed(url)
            // At trace level the server logs each request it has begun (its head read).
            let server = try ServerProcess([
                "serve", "--store", url.description, "--port", "0", "--shutdown-grace", "1", "--body-timeout", "600",
                "--log-level", "trace",
            ])
            defer { server.kill() }
            let port = try await server.port()
            _ = try await waitUntilHealthy(.tcp(port: port))
            let upload = try await connect(
                .tcp(port: port),
                sending: "POST /publications HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"title\": "
            )
            // In flight: the server has read the head and waits for the body's 990 bytes more.
            try await server.waitForLine("the upload's request started") { $0.contains("request started") && $0.contains("http.method=POST") }
            // The upload's own clock is ten minutes: stopping within two proves the server
            // did not wait for it (the wait throws, saying so, past two minutes).
            let status = try await server.terminate(timeout: .seconds(120))
            #expect(status == 0, "\(server.output)")
            #expect(!server.output.contains("http.status=500"), "\(server.output)")
            #expect(!server.output.contains("error"), "\(server.output)")
            _ = upload
        }
    }
}

/// The request clock's state machine on its own: which deadline runs when.
@Suite("request deadlines")
struct RequestDeadlinesTests {
    let timeouts = HTTPTimeouts(requestHead: .seconds(2), requestBody: .seconds(3))

    @Test func aRequestRunsItsHeadThenItsBodyClockAndTheAnswerRunsNone() {
        var deadlines = RequestDeadlines(timeouts)
        #expect(deadlines.bytesArrived() == .startTimer(.seconds(2), .readingHead))
        #expect(deadlines.bytesArrived() == .none, "more bytes of the same head do not restart it")
        #expect(deadlines.headRead() == .startTimer(.seconds(3), .readingBody))
        #expect(deadlines.requestEnded() == .cancelTimer)
        #expect(deadlines.phase == .answering && deadlines.mayAnswer)
        deadlines.responseBegan()
        #expect(!deadlines.mayAnswer)
        deadlines.responseEnded()
        #expect(deadlines.phase == .awaitingRequest)
        #expect(deadlines.bytesArrived() == .startTimer(.seconds(2), .readingHead), "the next request's head has its clock")
        #expect(deadlines.mayAnswer, "and a slow one may be answered with a 408")
        #expect(deadlines.headRead() == .startTimer(.seconds(3), .readingBody))
        #expect(deadlines.mayAnswer, "a new request has not been answered")
    }

    @Test func anAnswerBeforeTheBodyEndsLeavesTheConnectionWaitingForTheNextRequest() {
        var deadlines = RequestDeadlines(timeouts)
        _ = deadlines.bytesArrived()
        _ = deadlines.headRead()
        deadlines.responseBegan()
        deadlines.responseEnded()
        #expect(deadlines.isCurrent(.readingBody), "the body clock still runs: the client must finish sending")
        #expect(!deadlines.mayAnswer, "it was answered")
        #expect(deadlines.requestEnded() == .cancelTimer)
        #expect(deadlines.phase == .awaitingRequest)
        #expect(deadlines.bytesArrived() == .startTimer(.seconds(2), .readingHead))
    }

    @Test func aPipelinedHeadWhileAnAnswerIsWrittenMayNotBeAnsweredOverIt() {
        var deadlines = RequestDeadlines(timeouts)
        _ = deadlines.bytesArrived()
        _ = deadlines.headRead()
        _ = deadlines.requestEnded()
        deadlines.responseBegan()
        _ = deadlines.headRead()
        #expect(!deadlines.mayAnswer, "the first answer is still being written")
        deadlines.responseEnded()
        #expect(deadlines.mayAnswer)
    }
}
