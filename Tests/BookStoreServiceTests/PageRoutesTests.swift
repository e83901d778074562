import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PersistenceTesting
import Testing

@testable import BookStoreService

/// `/publications/{id}/pages` and `/pages/{id}`, in-process, on every backend and through a connection pooler.
@Suite("page routes")
struct PageRoutesTests {
    @Test(arguments: RouteStore.allCases)
    func listsAPublicationsPages(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let response = try await client.send(.get, "/publications/1/pages")
            #expect(response.status == .ok)
            let body = response.json
            #expect(body["total"]?.int == 3 && body["limit"]?.int == 20 && body["offset"]?.int == 0)
            let items = body["items"]?.array ?? []
            #expect(items.map { $0["number"]?.int ?? 0 } == [1, 2, 3])
            #expect(items.allSatisfy { $0["publicationId"]?.int == 1 && $0["text"]?.string?.isEmpty == false })
            let reversed = try await client.send(.get, "/publications/1/pages?sort=-number&limit=2").json
            #expect(reversed["items"]?.array.map { $0["number"]?.int ?? 0 } == [3, 2])
            #expect(reversed["total"]?.int == 3)
            let first = try #require(items.first)
            let id = try #require(first["id"]?.int)
            #expect(try await client.send(.get, "/pages/\(id)").json == first)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func addsChangesAndDeletesPages(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let next = try await client.send(.post, "/publications/2/pages", json: #"{"text": "An epilogue."}"#)
            #expect(next.status == .created, "\(next.text)")
            let id = try #require(next.json["id"]?.int)
            #expect(next.headers[.location] == "/pages/\(id)")
            #expect(next.json == ["id": .number(Double(id)), "number": 4, "text": "An epilogue.", "publicationId": 2])
            let numbered = try await client.send(.post, "/publications/2/pages", json: #"{"number": 10, "text": null}"#)
            #expect(numbered.status == .created && numbered.json["number"]?.int == 10 && numbered.json["text"] == .null)
            #expect(try await client.send(.get, "/publications/2").json["pageCount"]?.int == 5)

            let patched = try await client.send(.patch, "/pages/\(id)", json: #"{"number": 5}"#)
            #expect(patched.status == .ok)
            #expect(patched.json == ["id": .number(Double(id)), "number": 5, "text": "An epilogue.", "publicationId": 2])
            let cleared = try await client.send(.patch, "/pages/\(id)", json: #"{"text": null}"#, contentType: "application/merge-patch+json")
            #expect(cleared.json["text"] == .null && cleared.json["number"]?.int == 5)

            #expect(try await client.send(.delete, "/pages/\(id)").status == .noContent)
            expectProblem(try await client.send(.get, "/pages/\(id)"), .notFound)
            expectProblem(try await client.send(.patch, "/pages/\(id)", json: "{}"), .notFound)
            expectProblem(try await client.send(.delete, "/pages/\(id)"), .notFound)
            #expect(try await client.send(.get, "/publications/2").json["pageCount"]?.int == 4)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func refusedPagesAre4xxProblemsAndChangeNothing(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let before = try await client.send(.get, "/publications/1/pages").text
            for (json, fields) in [
                (#"{"number": 1.5}"#, ["number"]), (#"{"number": 40000}"#, ["number"]), (#"{"number": "3"}"#, ["number"]),
                (#"{"text": 12}"#, ["text"]), (#"{"publicationId": 2}"#, ["publicationId"]), (#"{"chapter": 2}"#, ["chapter"]),
                ("{", []), ("null", []),
            ] {
                expectProblem(try await client.send(.post, "/publications/1/pages", json: json), .badRequest, fields: fields)
                expectProblem(try await client.send(.patch, "/pages/1", json: json), .badRequest, fields: fields)
            }
            expectProblem(
                try await client.send(.post, "/publications/1/pages", json: #"{"number": null}"#),
                .unprocessableContent,
                fields: ["number"]
            )
            expectProblem(try await client.send(.patch, "/pages/1", json: #"{"number": null}"#), .unprocessableContent, fields: ["number"])
            expectProblem(try await client.send(.post, "/publications/99/pages", json: #"{"number": 1}"#), .notFound)
            expectProblem(
                try await client.send(.post, "/publications/1/pages", json: #"{"number": 1}"#, contentType: "text/plain"),
                .unsupportedMediaType
            )
            expectProblem(try await client.send(.get, "/pages/0"), .notFound)
            expectProblem(try await client.send(.get, "/pages/x"), .notFound)
            let after = try await client.send(.get, "/publications/1/pages").text
            #expect(after == before)
        }
    }
}
