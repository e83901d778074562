import Foundation
import HTTPTypes
import HummingbirdTesting
import PersistenceTesting
import Testing

@testable import BookStoreService

/// Text a client sends: NUL is refused naming the field (400), text over its documented
/// limit too (422), and the OpenAPI document says both; nothing refused is stored.
@Suite("text input")
struct TextInputTests {
    @Test(arguments: RouteStore.allCases)
    func nulInABodyOrAFilterIsRefusedNamingTheField(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            let before = try await client.send(.get, "/publications").json["total"]?.int
            let body = try await client.send(.post, "/publications", json: #"{"title": "a\u0000b", "synopsis": "fine"}"#)
            expectProblem(body, .badRequest, fields: ["title"])
            #expect(body.json["errors"]?[0]?["code"]?.string == "invalidCharacter")
            let patch = try await client.send(.patch, "/publications/1", json: #"{"lastName": "\u0000"}"#)
            expectProblem(patch, .badRequest, fields: ["lastName"])
            let page = try await client.send(.post, "/publications/1/pages", json: #"{"text": "x\u0000"}"#)
            expectProblem(page, .badRequest, fields: ["text"])
            expectProblem(try await client.send(.get, "/publications?q=%00"), .badRequest, fields: ["q"])
            expectProblem(try await client.send(.get, "/publications?lastName=a%00"), .badRequest, fields: ["lastName"])
            #expect(try await client.send(.get, "/publications").json["total"]?.int == before, "nothing was created")
            #expect(try await client.send(.get, "/publications/1").json["lastName"]?.string?.contains("\u{0}") == false)
        }
    }

    @Test(arguments: RouteStore.allCases)
    func textOverItsLimitIsA422NamingEachFieldAndTextAtItIsStored(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            func body(_ fields: [String: Int]) -> String {
                let members = fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\(String(repeating: "é", count: $0.value))\"" }
                return "{" + members.joined(separator: ", ") + "}"
            }
            let over = try await client.send(
                .post,
                "/publications",
                json: body([
                    "title": TextLimit.title + 1, "firstName": TextLimit.name + 1, "lastName": TextLimit.name, "synopsis": TextLimit.synopsis + 1,
                ])
            )
            expectProblem(over, .unprocessableContent, fields: ["title", "firstName", "synopsis"])
            #expect(over.json["errors"]?.array.allSatisfy { $0["code"]?.string == "stringTooLong" } == true)
            let atLimit = try await client.send(
                .post,
                "/publications",
                json: body([
                    "title": TextLimit.title, "firstName": TextLimit.name, "lastName": TextLimit.name, "synopsis": TextLimit.synopsis,
                ])
            )
            #expect(atLimit.status == .created, "\(atLimit.text)")
            #expect(atLimit.json["synopsis"]?.string?.count == TextLimit.synopsis)
            let id = try #require(atLimit.json["id"]?.int)
            expectProblem(
                try await client.send(.post, "/publications/\(id)/pages", json: body(["text": TextLimit.pageText + 1])),
                .unprocessableContent,
                fields: ["text"]
            )
            expectProblem(
                try await client.send(.get, "/publications?q=" + String(repeating: "a", count: TextLimit.filter + 1)),
                .badRequest,
                fields: ["q"]
            )
            // A body that is wrong in kind as well is a 400 listing everything.
            let mixed = try await client.send(
                .post,
                "/publications",
                json: #"{"title": "\#(String(repeating: "a", count: TextLimit.title + 1))", "price": "free"}"#
            )
            expectProblem(mixed, .badRequest, fields: ["title", "price"])
        }
    }

    /// The document gives the limits the service checks: a client that keeps to the
    /// schema is never refused for its text, its sort or its offset.
    @Test func theDocumentStatesTheLimitsTheServiceChecks() async throws {
        let document = OpenAPIDocument.document
        let schemas = try #require(document["components"]?["schemas"])
        for (schema, field, limit) in [
            ("PublicationInput", "title", TextLimit.title), ("PublicationInput", "firstName", TextLimit.name),
            ("PublicationPatch", "synopsis", TextLimit.synopsis), ("PageInput", "text", TextLimit.pageText),
        ] {
            let property = schemas[schema]?["properties"]?[field]
            #expect(property?["maxLength"]?.int == limit, "\(schema).\(field)")
            #expect(
                property?["pattern"]?.string.map { "a\u{0}b".range(of: $0, options: .regularExpression) == nil } == true,
                "\(schema).\(field) excludes NUL"
            )
        }
        func parameter(_ path: String, _ name: String) -> JSONValue? {
            document["paths"]?[path]?["get"]?["parameters"]?.array.first { $0["name"]?.string == name }?["schema"]
        }
        #expect(parameter("/publications", "offset")?["maximum"]?.int == ListQuery.maximumOffset)
        let sort = try #require(parameter("/publications", "sort")?["pattern"]?.string)
        let pageSort = try #require(parameter("/publications/{id}/pages", "sort")?["pattern"]?.string)
        for (pattern, fields) in [(sort, ListQuery.publicationSortFields), (pageSort, ListQuery.pageSortFields)] {
            for value in ["id", "-id"] + fields.map(\.name) + [fields.map { "-\($0.name)" }.joined(separator: ",")] {
                #expect(value.range(of: pattern, options: .regularExpression) != nil, "\(value) matches \(pattern)")
            }
            for value in ["", ",", "id,", "nope", "--id", "id,,id"] {
                #expect(value.range(of: pattern, options: .regularExpression) == nil, "'\(value)' does not match \(pattern)")
            }
        }
        #expect("synopsis".range(of: sort, options: .regularExpression) == nil, "a field not sorted by is not in the pattern")
    }
}

/// Paths, headers and ids: one resource answers at one path, `/status` keeps to its own
/// script, and request ids tell nothing about other clients.
@Suite("addresses and headers")
struct AddressAndHeaderTests {
    @Test(arguments: RouteStore.allCases)
    func nonCanonicalIdsAndPathsAre404(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            #expect(try await client.send(.get, "/publications/1").status == .ok)
            for path in [
                "/publications/+1", "/publications/01", "/publications/1/", "/publications//1", "//publications/1",
                "/publications/1/pages/", "/pages/+1", "/publications/", "/publications/0x1",
            ] {
                expectProblem(try await client.send(.get, path), .notFound)
            }
            expectProblem(try await client.send(.delete, "/publications/01"), .notFound)
            #expect(try await client.send(.get, "/publications/1").status == .ok, "a DELETE of /publications/01 deleted nothing")
        }
    }

    /// Headers of the HTTP layer, which no store engine touches: SQLite stands for both.
    @Test func statusSendsNosniffAndAPolicyThatAllowsOnlyItsOwnScript() async throws {
        try await withReadyService(TestBackend.sqlite) { client in
            let first = try await client.send(.get, "/status")
            #expect(first.headers[.init("X-Content-Type-Options")!] == "nosniff")
            let policy = try #require(first.headers[.contentSecurityPolicy])
            #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"))
            let nonce = try #require(policy.split(separator: "'").first { $0.hasPrefix("nonce-") }?.dropFirst("nonce-".count))
            #expect(nonce.count >= 16)
            #expect(first.text.contains(#"<script nonce="\#(nonce)">"#) && first.text.contains(#"<style nonce="\#(nonce)">"#))
            let second = try await client.send(.get, "/status")
            #expect(second.headers[.contentSecurityPolicy] != policy, "each response has a nonce of its own")
            #expect(try await client.send(.get, "/publications").headers[.init("X-Content-Type-Options")!] == "nosniff")
        }
    }

    /// The HTTP layer's request IDs, whatever the store: SQLite stands for both engines.
    @Test func generatedRequestIDsAreRandom() async throws {
        try await withReadyService(TestBackend.sqlite) { client in
            var ids: [String] = []
            for _ in 0..<20 { ids.append(try await client.send(.get, "/health").headers[.init("X-Request-ID")!] ?? "") }
            #expect(Set(ids).count == 20)
            #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }, "\(ids)")
            // Sequential ids share all but their last digits; random ones differ early.
            #expect(ids.map { $0.prefix(8) }.uniqued().count > 15, "\(ids)")
            #expect(try await client.send(.get, "/health", headers: [.init("X-Request-ID")!: "mine-1"]).headers[.init("X-Request-ID")!] == "mine-1")
        }
    }
}

extension Sequence where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
