import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PersistenceTesting
import Testing

@testable import BookStoreService

/// `/publications` and `/publications/{id}`, in-process, on every backend and through a connection pooler.
@Suite("publication routes")
struct PublicationRoutesTests {
    @Test(arguments: RouteStore.allCases)
    func listsTheFourBooksWithSynopsesAndAuthors(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let response = try await client.send(.get, "/publications")
            #expect(response.status == .ok)
            #expect(response.contentType == "application/json")
            let body = response.json
            #expect(body["total"]?.int == 4 && body["limit"]?.int == 20 && body["offset"]?.int == 0)
            let items = body["items"]?.array ?? []
            #expect(items.map { $0["title"]?.string ?? "" } == ["The first book", "The second book", "The third book", "The fourth book"])
            #expect(
                items.map { "\($0["firstName"]?.string ?? "") \($0["lastName"]?.string ?? "")" } == [
                    "Bill Smith", "John Doe", "Jane Doe", "Jack Brown",
                ]
            )
            #expect(items.map { $0["price"]?.number ?? -1 } == [22, 20, 21, 23])
            #expect(items.allSatisfy { $0["synopsis"] == $0["title"] })
            #expect(items.map { $0["pageCount"]?.int ?? 0 } == [3, 3, 2, 4])
            #expect(items.map { $0["id"]?.int ?? 0 } == [1, 2, 3, 4])
        }
    }

    @Test(arguments: RouteStore.allCases)
    func listsSortFilterAndPage(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            func titles(_ query: String) async throws -> [String] {
                let response = try await client.send(.get, "/publications?\(query)")
                #expect(response.status == .ok, "\(query): \(response.text)")
                return response.json["items"]?.array.compactMap { $0["title"]?.string } ?? []
            }
            #expect(try await titles("sort=-price") == ["The fourth book", "The first book", "The third book", "The second book"])
            #expect(try await titles("sort=lastName,-firstName") == ["The fourth book", "The second book", "The third book", "The first book"])
            #expect(try await titles("sort=-id&limit=2") == ["The fourth book", "The third book"])
            #expect(try await titles("sort=title&limit=2&offset=1") == ["The fourth book", "The second book"])
            #expect(try await titles("q=SECOND") == ["The second book"])
            #expect(try await titles("q=book&lastName=doe") == ["The second book", "The third book"])
            #expect(try await titles("minPrice=21&maxPrice=22") == ["The first book", "The third book"])
            // A range whose bounds cross is a query the document allows: it matches nothing.
            let crossed = try await client.send(.get, "/publications?minPrice=20&maxPrice=10")
            #expect(crossed.status == .ok && crossed.json["items"]?.array.isEmpty == true && crossed.json["total"]?.int == 0)
            #expect(try await titles("q=%25") == [])
            #expect(try await titles("sort=pageCount,-title") == ["The third book", "The second book", "The first book", "The fourth book"])
            let window = try await client.send(.get, "/publications?limit=1&offset=3").json
            #expect(window["total"]?.int == 4 && window["limit"]?.int == 1 && window["offset"]?.int == 3)
            #expect(window["items"]?.array.count == 1)
            let beyond = try await client.send(.get, "/publications?offset=10").json
            #expect(beyond["items"]?.array.isEmpty == true && beyond["total"]?.int == 4)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func badQueryValuesAre400sNamingEachParameter(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            for (query, fields) in [
                ("limit=0", ["limit"]), ("limit=101", ["limit"]), ("limit=ten", ["limit"]), ("offset=-1", ["offset"]),
                ("sort=author", ["sort"]), ("sort=title,,price", ["sort"]), ("minPrice=cheap&maxPrice=nan", ["minPrice", "maxPrice"]),
                ("limt=5", ["limt"]), ("limit=5&limit=6", ["limit"]),
            ] {
                expectProblem(try await client.send(.get, "/publications?\(query)"), .badRequest, fields: fields)
            }
            expectProblem(try await client.send(.get, "/publications/1/pages?q=x"), .badRequest, fields: ["q"])
        }
    }

    @Test(arguments: RouteStore.allCases)
    func readsOneAndAnswers404ForUnknownIDs(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let response = try await client.send(.get, "/publications/2")
            #expect(response.status == .ok)
            #expect(
                response.json == [
                    "id": 2, "title": "The second book", "price": 20, "firstName": "John", "lastName": "Doe",
                    "synopsis": "The second book", "pageCount": 3,
                ]
            )
            for path in [
                "/publications/99", "/publications/0", "/publications/abc", "/publications/99999999999999999999",
                "/publications/99/pages", "/nowhere",
            ] {
                expectProblem(try await client.send(.get, path), .notFound)
            }
            expectProblem(try await client.send(.put, "/publications/99", json: #"{"title": "x"}"#), .notFound)
            expectProblem(try await client.send(.patch, "/publications/99", json: #"{"title": "x"}"#), .notFound)
            expectProblem(try await client.send(.delete, "/publications/99"), .notFound)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func createsAPublication(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let response = try await client.send(
                .post,
                "/publications",
                json: #"{"title": "The fifth book", "price": 9.99, "firstName": "Ann", "lastName": "Lee", "synopsis": null}"#
            )
            #expect(response.status == .created, "\(response.text)")
            let created = response.json
            let id = try #require(created["id"]?.int)
            #expect(response.headers[.location] == "/publications/\(id)")
            #expect(
                created == [
                    "id": .number(Double(id)), "title": "The fifth book", "price": 9.99, "firstName": "Ann", "lastName": "Lee",
                    "synopsis": nil, "pageCount": 0,
                ]
            )
            #expect(try await client.send(.get, "/publications/\(id)").json == created)
            // Only a title: the model's defaults for the rest.
            let minimal = try await client.send(
                .post,
                "/publications",
                json: #"{"title": "Untitled"}"#,
                contentType: "application/json; charset=utf-8"
            )
            #expect(minimal.status == .created)
            #expect(minimal.json["price"]?.number == 0 && minimal.json["firstName"] == .null)
            #expect(try await client.send(.get, "/publications").json["total"]?.int == 6)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func refusedBodiesAre4xxProblemsAndChangeNothing(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let before = try await client.send(.get, "/publications?limit=100").text
            // 400: not JSON, not an object, unknown, read-only or mistyped fields.
            for (json, fields) in [
                (#"{"title": "#, [String]()), ("", []), ("[1, 2]", []), (#""a string""#, []), ("not json", []),
                (#"{"title": "x", "author": "Bill"}"#, ["author"]), (#"{"title": "x", "id": 7}"#, ["id"]),
                (#"{"title": "x", "pageCount": 1}"#, ["pageCount"]), (#"{"title": 5, "price": "10"}"#, ["title", "price"]),
                (#"{"title": "x", "firstName": ["a"]}"#, ["firstName"]), (#"{"title": "x", "price": true}"#, ["price"]),
                (#"{"title": "x", "price": 1e999}"#, []),
            ] {
                expectProblem(try await client.send(.post, "/publications", json: json), .badRequest, fields: fields)
                expectProblem(try await client.send(.put, "/publications/1", json: json), .badRequest, fields: fields)
                expectProblem(try await client.send(.patch, "/publications/1", json: json), .badRequest, fields: fields)
            }
            // 422: the model's rules.
            for (json, fields, code) in [
                (#"{"price": 10}"#, ["title"], "missingValue"), (#"{"title": null}"#, ["title"], "missingValue"),
                (#"{"title": "x", "price": 1000.5}"#, ["price"], "valueTooLarge"), (#"{"title": "x", "price": -0.01}"#, ["price"], "valueTooSmall"),
                (#"{"title": "x", "price": null}"#, ["price"], "missingValue"),
            ] {
                let post = try await client.send(.post, "/publications", json: json)
                expectProblem(post, .unprocessableContent, fields: fields)
                #expect(post.json["errors"]?[0]?["code"]?.string == code)
                expectProblem(try await client.send(.put, "/publications/1", json: json), .unprocessableContent, fields: fields)
            }
            expectProblem(try await client.send(.patch, "/publications/1", json: #"{"price": 5000}"#), .unprocessableContent, fields: ["price"])
            expectProblem(try await client.send(.patch, "/publications/1", json: #"{"title": null}"#), .unprocessableContent, fields: ["title"])
            // 415: anything but JSON.
            for contentType in ["text/plain", "application/x-www-form-urlencoded", nil] {
                expectProblem(
                    try await client.send(.post, "/publications", json: #"{"title": "x"}"#, contentType: contentType),
                    .unsupportedMediaType
                )
            }
            expectProblem(
                try await client.send(.put, "/publications/1", json: #"{"title": "x"}"#, contentType: "application/merge-patch+json"),
                .unsupportedMediaType
            )
            // 413: over 1 MiB.
            let large = #"{"title": ""# + String(repeating: "a", count: 1 << 20) + #""}"#
            expectProblem(try await client.send(.post, "/publications", json: large), .contentTooLarge)
            expectProblem(try await client.send(.patch, "/publications/1", json: large), .contentTooLarge)

            let after = try await client.send(.get, "/publications?limit=100").text
            #expect(after == before)
        }
    }

    /// On both engines: PostgreSQL's `real` column meets prices like 1e308 and -1e-320 too.
    @Test(arguments: RouteStore.allCases)
    func oddInputIsNeverA500(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let bodies = [
                String(repeating: "[", count: 100_000), String(repeating: "{\"a\":", count: 50_000) + "1" + String(repeating: "}", count: 50_000),
                "{\"title\": \"\u{0}\", \"price\": 1e308}", #"{"title": "x", "price": 1e308}"#, #"{"title": "x", "price": -1e-320}"#,
                #"{"title": "\ud800"}"#, "\u{FEFF}{}", #"{"title": "x"} trailing"#, #"{"title": "a", "title": "b", "price": 2000}"#,
                String(decoding: [0xFF, 0xFE, 0x7B, 0x7D], as: UTF8.self),
            ]
            for body in bodies {
                for (method, path) in [
                    (HTTPRequest.Method.post, "/publications"), (.put, "/publications/2"), (.patch, "/pages/2"), (.post, "/publications/2/pages"),
                ] {
                    let response = try await client.send(method, path, json: body)
                    #expect(response.status.code < 500, "\(method) \(path) \(body.prefix(40)): \(response.text.prefix(300))")
                    if response.status.code >= 400 { #expect(response.contentType == "application/problem+json") }
                }
            }
            for query in [
                "q=%FF%FE", "q=%", "q=%27%3B--", "lastName=%00", "sort=", "limit=", "offset=99999999999", "minPrice=1e999",
                "sort=-", "sort=title%2C-price", "q=" + String(repeating: "a", count: 10_000),
            ] {
                let response = try await client.send(.get, "/publications?\(query)")
                #expect(response.status.code < 500, "\(query): \(response.text.prefix(300))")
            }
            for path in [
                "/publications/-1", "/publications/1.5", "/publications/%31", "/publications//pages", "/pages/9223372036854775807",
                "/publications/1/pages/2", "/PUBLICATIONS",
            ] {
                let response = try await client.send(.get, path)
                #expect(response.status.code < 500, "\(path): \(response.text.prefix(300))")
            }
            // Whatever was accepted above was a valid change; the four books are still there.
            #expect(try await client.send(.get, "/publications?limit=100").json["total"]?.int ?? 0 >= 4)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func replacesAndUpdates(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let replaced = try await client.send(.put, "/publications/1", json: #"{"title": "The first book, revised", "price": 30}"#)
            #expect(replaced.status == .ok, "\(replaced.text)")
            // Fields left out of a PUT get the model's defaults: the names and synopsis are gone.
            #expect(
                replaced.json == [
                    "id": 1, "title": "The first book, revised", "price": 30, "firstName": nil, "lastName": nil,
                    "synopsis": nil, "pageCount": 3,
                ]
            )
            let patched = try await client.send(.patch, "/publications/2", json: #"{"price": 10.99, "firstName": null}"#)
            #expect(patched.status == .ok)
            #expect(
                patched.json == [
                    "id": 2, "title": "The second book", "price": 10.99, "firstName": nil, "lastName": "Doe",
                    "synopsis": "The second book", "pageCount": 3,
                ]
            )
            let merged = try await client.send(
                .patch,
                "/publications/2",
                json: #"{"synopsis": "A sequel."}"#,
                contentType: "application/merge-patch+json"
            )
            #expect(merged.json["synopsis"]?.string == "A sequel." && merged.json["price"]?.number == 10.99)
            #expect(try await client.send(.get, "/publications/2").json == merged.json)
            let empty = try await client.send(.patch, "/publications/3", json: "{}")
            #expect(empty.status == .ok && empty.json["title"]?.string == "The third book")
        }
    }

    @Test(arguments: RouteStore.allCases)
    func deletingAPublicationCascadesToItsPages(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let pages = try await client.send(.get, "/publications/3/pages").json["items"]?.array.compactMap { $0["id"]?.int } ?? []
            #expect(pages.count == 2)
            let deleted = try await client.send(.delete, "/publications/3")
            #expect(deleted.status == .noContent && deleted.body.readableBytes == 0)
            expectProblem(try await client.send(.get, "/publications/3"), .notFound)
            for page in pages {
                expectProblem(try await client.send(.get, "/pages/\(page)"), .notFound)
            }
            expectProblem(try await client.send(.delete, "/publications/3"), .notFound)
            #expect(try await client.send(.get, "/publications").json["total"]?.int == 3)
            // Other publications keep their pages.
            #expect(try await client.send(.get, "/publications/1/pages").json["total"]?.int == 3)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func otherMethodsAre405sWithAllow(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            for (method, path, allow) in [
                (HTTPRequest.Method.delete, "/publications", "GET, POST, HEAD"), (.put, "/publications", "GET, POST, HEAD"),
                (.post, "/publications/1", "GET, PUT, PATCH, DELETE, HEAD"), (.put, "/pages/1", "GET, PATCH, DELETE, HEAD"),
                (.delete, "/publications/1/pages", "GET, POST, HEAD"), (.post, "/health", "GET, HEAD"), (.options, "/openapi.json", "GET, HEAD"),
            ] {
                let response = try await client.send(method, path)
                expectProblem(response, .methodNotAllowed)
                #expect(response.headers[.allow] == allow, "\(method) \(path)")
            }
            let head = try await client.send(.head, "/publications/1")
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.contentType == "application/json")
            expectProblem(try await client.send(.head, "/publications/99"), .notFound, checkBody: false)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func everyResponseCarriesARequestID(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let generated = try await client.send(.get, "/publications")
            #expect(generated.headers[.requestID]?.isEmpty == false)
            let given = try await client.send(.get, "/publications/99", headers: [.requestID: "trace-42"])
            #expect(given.headers[.requestID] == "trace-42")
            let unusable = try await client.send(.get, "/health", headers: [.requestID: "has spaces"])
            #expect(unusable.headers[.requestID].map { $0 != "has spaces" && !$0.isEmpty } == true)
            let refused = try await client.send(.post, "/publications", json: "{")
            #expect(refused.headers[.requestID]?.isEmpty == false)
        }
    }
}
