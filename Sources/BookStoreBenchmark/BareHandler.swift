import BookStoreService
import Foundation
import Hummingbird
import Logging
import Persistence

/// The floor the service is measured against: a Hummingbird application with no middleware
/// and only the routes the benchmark loads (a list at an offset or after a key), each one read of hand-written SQL
/// (``BareQueries``) on the framework's `Database`, encoded as the service encodes its
/// resources. What the service does beyond this is its own cost: contexts, fetch requests,
/// managed objects, middleware.
struct BareHandler: Sendable {
    let database: any Database
    let queries: BareQueries

    /// The database under `store` with a writer and two readers, as the service opens its
    /// store (`PersistentStore.Options.existingOnly`); `BenchmarkBackend.openDatabase` opens
    /// one connection only, which would serialize every read.
    static func openDatabase(_ store: StoreURL, readerCount: Int = 2) async throws -> any Database {
        switch store.kind {
        case .sqlite(let path): try await SQLiteDatabase.open(path: path, mode: .readWrite, readerCount: readerCount)
        case .postgres(let configuration): try await PostgresDatabase.open(configuration, readerCount: readerCount)
        case .memory: preconditionFailure("the HTTP benchmark needs a store two servers can open")
        }
    }

    func makeApplication(host: String, port: Int, logger: Logger) -> some ApplicationProtocol {
        let database = self.database
        let queries = self.queries
        let router = Router()
        router.get("/publications/{id}") { _, context -> Response in
            guard let id = context.parameters.get("id", as: Int64.self) else { return Response(status: .notFound) }
            guard let publication = try await database.read({ try queries.publication(id, on: $0) }) else {
                return Response(status: .notFound)
            }
            return try Self.json(publication)
        }
        router.get("/publications") { request, _ -> Response in
            // The service's defaults and bounds: 20, at most 100.
            let limit = min(max(request.uri.queryParameters.get("limit", as: Int.self) ?? 20, 1), 100)
            if let after = request.uri.queryParameters.get("after", as: Int64.self) {
                return try Self.json(try await database.read { try queries.list(limit: limit, after: after, on: $0) })
            }
            let offset = max(request.uri.queryParameters.get("offset", as: Int.self) ?? 0, 0)
            return try Self.json(try await database.read { try queries.list(limit: limit, offset: offset, on: $0) })
        }
        return Application(router: router, configuration: .init(address: .hostname(host, port: port)), logger: logger)
    }

    /// As the service's `JSONResponseEncoder`: keys sorted, slashes unescaped, written by hand
    /// where the service writes its resources so (``JSONWritable``).
    private static func json(_ value: some Encodable) throws -> Response {
        if let writable = value as? any JSONWritable {
            var buffer = ByteBuffer()
            try writable.writeJSON(into: &buffer)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
