import BookStoreTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStoreService

/// The OpenAPI document and the routes, kept in step: every operation is exercised, and
/// every response is checked against the document (status declared, content type, body
/// schema).
@Suite("OpenAPI document")
struct OpenAPITests {
    /// Records which operations answered with which statuses, checking each response.
    final class Checker: Sendable {
        let document: JSONValue
        let exercised = Mutex<Set<String>>([])

        init(document: JSONValue) {
            self.document = document
        }

        /// The path template of the document that `path` matches.
        func template(for path: String) -> String? {
            let segments = path.split(separator: "?")[0].split(separator: "/")
            return document["paths"]?.objectValue?.keys.first { template in
                let parts = template.split(separator: "/")
                return parts.count == segments.count && zip(parts, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
            }
        }

        func check(_ method: HTTPRequest.Method, _ path: String, _ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
            let name = "\(method.rawValue) \(path)"
            guard let template = template(for: path),
                let operation = document["paths"]?[template]?[method.rawValue.lowercased()]
            else {
                Issue.record("\(name): the document has no such operation", sourceLocation: sourceLocation)
                return
            }
            let status = String(response.status.code)
            exercised.withLock { _ = $0.insert("\(method.rawValue) \(template)") }
            guard let declared = operation["responses"]?[status] else {
                Issue.record("\(name): status \(status) is not declared", sourceLocation: sourceLocation)
                return
            }
            guard let content = declared["content"]?.objectValue else {
                #expect(response.body.readableBytes == 0, "\(name): \(status) declares no body", sourceLocation: sourceLocation)
                return
            }
            let mediaType = response.contentType?.split(separator: ";").first.map(String.init) ?? ""
            guard let media = content[mediaType] else {
                Issue.record("\(name): \(status) answered \(mediaType), the document says \(content.keys.sorted())", sourceLocation: sourceLocation)
                return
            }
            if mediaType.hasSuffix("json"), let schema = media["schema"] {
                let problems = SchemaValidator(document: document).problems(response.json, schema)
                #expect(problems.isEmpty, "\(name) \(status): \(problems.joined(separator: "; "))", sourceLocation: sourceLocation)
            }
            if let headers = declared["headers"]?.objectValue {
                for header in headers.keys {
                    #expect(
                        response.headers[HTTPField.Name(header)!] != nil,
                        "\(name) \(status): no \(header) header",
                        sourceLocation: sourceLocation
                    )
                }
            }
        }

        var operations: Set<String> {
            var all: Set<String> = []
            for (path, item) in document["paths"]?.objectValue ?? [:] {
                for method in (item.objectValue ?? [:]).keys where method != "parameters" {
                    all.insert("\(method.uppercased()) \(path)")
                }
            }
            return all
        }
    }

    @Test func theDocumentListsExactlyTheRoutes() throws {
        let service = try makeService(.sqlite("/nonexistent/store.sqlite"))
        let routes = Set(service.routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(routes == Checker(document: OpenAPIDocument.document).operations)
        #expect(OpenAPIDocument.document["openapi"]?.string == "3.1.0")

        // With metrics, /metrics is one more route, and the document lists it.
        var configuration = service.configuration
        configuration.metrics = ServiceMetrics()
        let measured = BookStoreService(configuration: configuration, logger: quietLogger)
        let measuredRoutes = Set(measured.routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(measuredRoutes == routes.union(["GET /metrics"]))
        #expect(measuredRoutes == Checker(document: OpenAPIDocument.document(writeAccess: configuration.writeAccess, servesMetrics: true)).operations)
    }

    @Test(arguments: TestEngine.allCases)
    func everyOperationAnswersAsTheDocumentSays(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await copyFixture(version: 1, to: url)
            let hold = MigrationHold()
            let service = try makeService(url) { _ in try await hold.wait() }
            try await service.makeApplication().test(.router) { client in
                let served = try await client.send(.get, "/openapi.json")
                #expect(served.status == .ok && served.json == OpenAPIDocument.document)
                let checker = Checker(document: served.json)
                func call(
                    _ method: HTTPRequest.Method,
                    _ path: String,
                    json: String? = nil,
                    contentType: String? = "application/json"
                ) async throws -> TestResponse {
                    let response = try await client.send(method, path, json: json, contentType: contentType)
                    checker.check(method, path, response)
                    return response
                }
                // During the migration: 503s everywhere but /health's own.
                while try await client.send(.get, "/health").json["status"]?.string != "migrating" { try await Task.sleep(for: .milliseconds(10)) }
                _ = try await call(.get, "/health")
                _ = try await call(.get, "/publications")
                _ = try await call(.put, "/publications/1", json: #"{"title": "x"}"#)
                hold.release()
                try await waitUntilReady(client)

                _ = try await call(.get, "/health")
                _ = try await call(.get, "/status")
                _ = try await call(.get, "/openapi.json")
                _ = try await call(.get, "/publications?sort=-price&limit=2")
                _ = try await call(.get, "/publications?limit=0")
                let firstPage = try await call(.get, "/publications?sort=-price&limit=2")
                _ = try await call(.get, "/publications?sort=-price&limit=2&after=\(firstPage.json["next"]?.string ?? "")")
                _ = try await call(.get, "/publications?limit=2&after=2&offset=1")
                let created = try await call(.post, "/publications", json: #"{"title": "New", "price": 1}"#)
                let id = try #require(created.json["id"]?.int)
                _ = try await call(.post, "/publications", json: #"{"title": 1}"#)
                _ = try await call(.post, "/publications", json: #"{"price": 1}"#)
                _ = try await call(.post, "/publications", json: #"{"title": "x"}"#, contentType: "text/plain")
                _ = try await call(.post, "/publications", json: #"{"title": ""# + String(repeating: "a", count: 1 << 20) + #""}"#)
                _ = try await call(.get, "/publications/\(id)")
                _ = try await call(.get, "/publications/999")
                _ = try await call(.put, "/publications/\(id)", json: #"{"title": "Renamed"}"#)
                _ = try await call(.put, "/publications/\(id)", json: #"{"title": "Renamed", "price": 2000}"#)
                _ = try await call(.put, "/publications/999", json: #"{"title": "Renamed"}"#)
                _ = try await call(.patch, "/publications/\(id)", json: #"{"synopsis": "Short."}"#, contentType: "application/merge-patch+json")
                _ = try await call(.patch, "/publications/\(id)", json: #"{"isbn": "123"}"#)
                let page = try await call(.post, "/publications/\(id)/pages", json: #"{"text": "One."}"#)
                let pageID = try #require(page.json["id"]?.int)
                _ = try await call(.post, "/publications/\(id)/pages", json: #"{"number": 0.5}"#)
                _ = try await call(.post, "/publications/\(id)/pages", json: #"{"number": null}"#)
                _ = try await call(.post, "/publications/999/pages", json: #"{"number": 1}"#)
                _ = try await call(.get, "/publications/\(id)/pages")
                _ = try await call(.get, "/publications/\(id)/pages?sort=bogus")
                _ = try await call(.get, "/publications/999/pages")
                _ = try await call(.get, "/pages/\(pageID)")
                _ = try await call(.get, "/pages/999")
                _ = try await call(.patch, "/pages/\(pageID)", json: #"{"number": 7}"#)
                _ = try await call(.patch, "/pages/\(pageID)", json: #"{"number": 70000}"#)
                _ = try await call(.delete, "/pages/\(pageID)")
                _ = try await call(.delete, "/pages/\(pageID)")
                _ = try await call(.delete, "/publications/\(id)")
                _ = try await call(.delete, "/publications/\(id)")

                let missed = checker.operations.subtracting(checker.exercised.withLock { $0 })
                #expect(missed.isEmpty, "operations never exercised: \(missed.sorted())")
            }
        }
    }
}
