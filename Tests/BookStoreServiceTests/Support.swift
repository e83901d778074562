import BookStore
import BookStoreTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStoreService
@testable import Persistence

/// Writes the book's catalogue into a new store at `version` (5, the current one, by default).
func seed(_ url: StoreURL, version: Int = 5) async throws {
    let models = try loadModels()
    _ = try await StoreAdministration(models: models, logger: quietLogger).seed(url, version: version, count: 0, catalogue: try loadCatalogue())
}

/// A frozen fixture store of `version` (Tests/Fixtures/BookStore), copied into a store of
/// `backend` at `url`: SQLite as a file copy, PostgreSQL with `StoreCopy`.
func copyFixture(version: Int, to url: StoreURL) async throws {
    let fixture = packageRoot.appendingPathComponent("Tests/Fixtures/BookStore/BookStore\(version).sqlite")
    switch url.kind {
    case .sqlite(let path):
        try FileManager.default.copyItem(at: fixture, to: URL(fileURLWithPath: path))
    default:
        _ = try await StoreCopy.copy(from: .sqlite(fixture.path), to: url, versions: try loadModels().versions, replace: false, logger: quietLogger)
    }
}

func makeService(
    _ url: StoreURL,
    address: ServiceConfiguration.Address = .tcp(host: "127.0.0.1", port: 0),
    migrate: Bool = true,
    writeAccess: WriteAccess = .anonymousOnLoopback,
    logger: Logger = quietLogger,
    beforeMigration: @escaping @Sendable (MigrationPlan) async throws -> Void = { _ in }
) throws -> BookStoreService {
    BookStoreService(
        configuration: ServiceConfiguration(
            store: url,
            models: try loadModels(),
            address: address,
            writeAccess: writeAccess,
            migrate: migrate,
            retryAfterSeconds: 5,
            beforeMigration: beforeMigration
        ),
        logger: logger
    )
}

/// Runs `body` against the service in-process (Hummingbird's router test framework, which
/// runs the store service too) once `/health` says it is ready.
///
/// The routes' tests run on every backend, the in-memory store too (`TestBackend`): the
/// service serves `memory:NAME` as any store. The service tests that run `bookstore` as a
/// process of its own, or reach the store from another process or session (a migration,
/// a full disk, a second replica), run on the two engines only (`TestEngine`): an in-memory
/// store is the memory of the one process that opened it.
func withReadyService<T: Sendable>(
    _ backend: TestBackend,
    seedVersion: Int? = 5,
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
) async throws -> T {
    try await backend.withStoreURL { url in
        // An in-memory store is gone when its last connection closes: one of the test's own
        // keeps it from the seed to the end.
        let keeper: SQLiteConnection? =
            if case .memory(let name) = url.kind {
                try SQLiteConnection(path: "file:\(name)?mode=memory&cache=shared", mode: .readWriteCreate)
            } else {
                nil
            }
        defer { keeper?.close() }
        if let seedVersion { try await seed(url, version: seedVersion) }
        return try await makeService(url).makeApplication().test(.router) { client in
            try await waitUntilReady(client)
            return try await body(client)
        }
    }
}

/// Where the routes' tests run: every backend, and PostgreSQL through PgBouncer in
/// transaction mode (``TestPgBouncer``), as replicas behind a pooler reach it, with their
/// migrations over the server itself.
enum RouteStore: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, memory, postgres
    case pgbouncer = "postgres through pgbouncer"

    var testDescription: String { rawValue }
}

/// ``withReadyService(_:seedVersion:_:)`` on a route store.
func withReadyService<T: Sendable>(
    _ store: RouteStore,
    seedVersion: Int? = 5,
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
) async throws -> T {
    switch store {
    case .sqlite: try await withReadyService(TestBackend.sqlite, seedVersion: seedVersion, body)
    case .memory: try await withReadyService(TestBackend.memory, seedVersion: seedVersion, body)
    case .postgres: try await withReadyService(TestBackend.postgres, seedVersion: seedVersion, body)
    case .pgbouncer:
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, direct in
            if let seedVersion { try await seed(pooled, version: seedVersion) }
            let service = BookStoreService(
                configuration: ServiceConfiguration(store: pooled, migrationStore: direct, models: try loadModels(), retryAfterSeconds: 5),
                logger: quietLogger
            )
            return try await service.makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                return try await body(client)
            }
        }
    }
}

/// ``withReadyService(_:seedVersion:_:)`` on an engine's store.
func withReadyService<T: Sendable>(
    _ engine: TestEngine,
    seedVersion: Int? = 5,
    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
) async throws -> T {
    try await withReadyService(engine.backend, seedVersion: seedVersion, body)
}

/// Polls `/health` until it answers 200.
///
/// Five minutes at most: the in-process service (its start-up migration too) runs on the
/// test process's cooperative threads, two on a two-core machine, which every test running
/// beside it shares; the limit catches a service that never gets ready, not a slow one.
func waitUntilReady(_ client: some TestClientProtocol, timeout: Duration = .seconds(300)) async throws {
    let deadline = ContinuousClock.now + timeout
    var last = ""
    while ContinuousClock.now < deadline {
        let response = try await client.execute(uri: "/health", method: .get, headers: [:], body: nil)
        if response.status == .ok { return }
        last = "\(response.status.code) \(String(buffer: response.body))"
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("the service was not ready within \(timeout); /health last said \(last)")
    throw CancellationError()
}

/// Polls `/health` while it says `status` (`starting`, `ok`), and returns the first answer
/// that says something else, or the last one after `timeout`: the event a test waits for is
/// the replica's own report of it.
func firstHealth(after status: String, _ client: some TestClientProtocol, timeout: Duration = .seconds(60)) async throws -> TestResponse {
    var health = try await client.send(.get, "/health")
    let deadline = ContinuousClock.now + timeout
    while health.json["status"]?.string == status, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
        health = try await client.send(.get, "/health")
    }
    return health
}

/// Polls `/health` until it says the store is migrating, and returns that answer.
func waitUntilMigrating(_ client: some TestClientProtocol) async throws -> TestResponse {
    var health = try await client.send(.get, "/health")
    while health.json["status"]?.string != "migrating" {
        try await Task.sleep(for: .milliseconds(10))
        health = try await client.send(.get, "/health")
    }
    return health
}

// MARK: Requests and responses

extension TestClientProtocol {
    /// Sends `json` (any JSON text) with `Content-Type: application/json` unless told otherwise.
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        json: String? = nil,
        contentType: String? = "application/json",
        headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        if json != nil, let contentType { headers[.contentType] = contentType }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    /// The body as JSON; a failed expectation and `.null` when it is not.
    var json: JSONValue {
        do { return try JSONValue(parsing: Data(body.readableBytesView)) } catch {
            Issue.record("the body is not JSON: \(text)")
            return .null
        }
    }

    var contentType: String? { headers[.contentType] }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? { objectValue?[key] }
    subscript(index: Int) -> JSONValue? {
        if case .array(let values) = self, values.indices.contains(index) { values[index] } else { nil }
    }
    var string: String? { if case .string(let value) = self { value } else { nil } }
    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var int: Int? { number.map { Int($0) } }
    var array: [JSONValue] { if case .array(let values) = self { values } else { [] } }
}

/// Checks a refusal: the status, `application/problem+json`, and the problem members.
func expectProblem(
    _ response: TestResponse,
    _ status: HTTPResponse.Status,
    fields: [String] = [],
    checkBody: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
    #expect(response.contentType == "application/problem+json", sourceLocation: sourceLocation)
    // A HEAD response has the headers of the GET one and no body.
    guard checkBody else { return }
    let body = response.json
    #expect(body["status"]?.int == Int(status.code), sourceLocation: sourceLocation)
    #expect(body["title"]?.string?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(body["detail"]?.string?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(body["type"]?.string?.isEmpty == false, sourceLocation: sourceLocation)
    if !fields.isEmpty {
        #expect(
            Set(body["errors"]?.array.compactMap { $0["field"]?.string } ?? []) == Set(fields),
            "\(response.text)",
            sourceLocation: sourceLocation
        )
    }
}
