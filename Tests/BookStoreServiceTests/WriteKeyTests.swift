import BookStoreTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PersistenceTesting
import Testing

@testable import BookStoreService
@testable import Persistence

/// Writes need one of the service's write keys; reads do not; a service that would take
/// anonymous writes beyond loopback does not start.
@Suite("write keys")
struct WriteKeyTests {
    /// Two keys, as during a rotation: the old one and the new one.
    static let oldKey = "old-key-0123456789abcdef"
    static let newKey = "bmV3IGtleSBmb3IgdGhlIHRlc3Q="
    static let wrongKey = "d3Jvbmcga2V5LCBndWVzc2Vk"

    /// Every write operation of the API, on the catalogue's publication 1 and page 1.
    static let writes: [(method: HTTPRequest.Method, path: String, json: String?)] = [
        (.post, "/publications", #"{"title": "Refused"}"#),
        (.put, "/publications/1", #"{"title": "Refused"}"#),
        (.patch, "/publications/1", #"{"price": 999}"#),
        (.delete, "/publications/1", nil),
        (.post, "/publications/1/pages", #"{"text": "Refused"}"#),
        (.patch, "/pages/1", #"{"text": "Refused"}"#),
        (.delete, "/pages/1", nil),
    ]

    @Test(arguments: TestEngine.allCases)
    func aWriteWithoutAKeyOrWithAWrongOneIsRefusedAndWritesNothing(_ backend: TestEngine) async throws {
        let log = LogRecorder()
        try await backend.withStoreURL { url in
            try await seed(url)
            let keys = try WriteKeys([Self.oldKey, Self.newKey])
            try await makeService(url, writeAccess: .keys(keys), logger: log.logger).makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                let before = try await Self.everything(client)
                for write in Self.writes {
                    let name = "\(write.method) \(write.path)"
                    let missing = try await client.send(write.method, write.path, json: write.json)
                    expectProblem(missing, .unauthorized)
                    #expect(missing.headers[.wwwAuthenticate] == #"Bearer realm="bookstore""#, "\(name)")
                    for header in [
                        "Bearer \(Self.wrongKey)", "Bearer \(Self.oldKey)x", "Bearer \(Self.oldKey.dropLast())", "Basic \(Self.oldKey)", "Bearer",
                        "\(Self.newKey)",
                    ] {
                        let refused = try await client.send(write.method, write.path, json: write.json, headers: [.authorization: header])
                        expectProblem(refused, .unauthorized)
                        #expect(refused.headers[.wwwAuthenticate]?.hasPrefix("Bearer realm=\"bookstore\", error=") == true, "\(name) with \(header)")
                        #expect(!refused.text.contains(Self.wrongKey) && !refused.text.contains(Self.oldKey), "\(name): the key echoed")
                    }
                }
                // Nothing of it was written.
                #expect(try await Self.everything(client) == before)
                // Reads, /health, /status and the document need no key.
                for path in ["/publications", "/publications/1", "/publications/1/pages", "/pages/1", "/health", "/status", "/openapi.json"] {
                    #expect(try await client.send(.get, path).status == .ok, "\(path)")
                }
            }
        }
        // A key sent is never logged, right or wrong.
        #expect(!log.all.isEmpty)
        #expect(log.all.allSatisfy { !$0.contains(Self.wrongKey) && !$0.contains(Self.oldKey.prefix(12)) && !$0.contains(Self.newKey.prefix(12)) })
        #expect(log.all.contains { $0.contains("write refused") })
    }

    @Test(arguments: TestEngine.allCases)
    func eitherKeyOfARotationWrites(_ backend: TestEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        // The file as an operator keeps it mid-rotation: a comment, the new key, the old one, a blank line, CRLF.
        let file = directory.appendingPathComponent("write-keys").path
        try "# rotated 2026-11\r\n\(Self.newKey)\r\n\r\n  \(Self.oldKey)  \n".write(toFile: file, atomically: true, encoding: .utf8)
        let keys = try WriteKeys(contentsOfFile: file)
        #expect(keys.count == 2)
        try await backend.withStoreURL { url in
            try await seed(url)
            try await makeService(url, writeAccess: .keys(keys)).makeApplication().test(.router) { client in
                try await waitUntilReady(client)
                for (index, key) in [Self.oldKey, Self.newKey].enumerated() {
                    // The scheme's case does not matter.
                    let authorization: HTTPFields = [.authorization: (index == 0 ? "Bearer " : "bearer ") + key]
                    let created = try await client.send(
                        .post,
                        "/publications",
                        json: #"{"title": "Key \#(index)", "price": 1.25}"#,
                        headers: authorization
                    )
                    #expect(created.status == .created, "\(created.text)")
                    let id = try #require(created.json["id"]?.int)
                    #expect(try await client.send(.patch, "/publications/\(id)", json: #"{"price": 2.5}"#, headers: authorization).status == .ok)
                    let page = try await client.send(.post, "/publications/\(id)/pages", json: #"{"text": "Ça marche."}"#, headers: authorization)
                    #expect(page.status == .created)
                    let pageID = try #require(page.json["id"]?.int)
                    #expect(try await client.send(.delete, "/pages/\(pageID)", headers: authorization).status == .noContent)
                    #expect(try await client.send(.get, "/publications/\(id)").json["price"]?.number == 2.5)
                }
                #expect(try await client.send(.get, "/publications").json["total"]?.int == 6)
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func theServiceRefusesToListenBeyondLoopbackWithoutAKey(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            for host in ["0.0.0.0", "::", "192.0.2.7", "bookstore.example"] {
                let service = try makeService(url, address: .tcp(host: host, port: 0))
                await #expect(throws: ServiceStartError.self, "\(host)") { try await service.run() }
            }
            // An application made to embed is refused as well.
            #expect(throws: ServiceStartError.self) { _ = try makeService(url, address: .tcp(host: "0.0.0.0", port: 0)).makeApplication() }
            // Refused before anything: the store was not even created.
            await #expect(throws: StoreError.self) { _ = try await PersistentStore.metadata(at: url) }
            // Where it is deliberate, or keyed, the same address is taken.
            #expect(throws: Never.self) { try makeService(url, address: .tcp(host: "0.0.0.0", port: 0), writeAccess: .anonymous).checkWriteAccess() }
            #expect(throws: Never.self) {
                try makeService(url, address: .tcp(host: "0.0.0.0", port: 0), writeAccess: .keys(try WriteKeys([Self.newKey]))).checkWriteAccess()
            }
        }
    }

    /// `bookstore serve` as deployed: beyond loopback it refuses to start without a key file
    /// (nothing listens), and with one it takes writes with the key only.
    @Test(arguments: TestEngine.allCases)
    func theExecutableListensBeyondLoopbackOnlyWithAKeyFile(_ backend: TestEngine) async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        try await backend.withStoreURL { url in
            try await seed(url)
            let refused = try ServerProcess(["serve", "--store", url.description, "--host", "0.0.0.0", "--port", "0"])
            defer { refused.kill() }
            #expect(try await refused.waitForExit() == 1)
            #expect(refused.output.contains("--write-key-file") && refused.output.contains("--allow-anonymous-writes"), "\(refused.output)")
            #expect(!refused.output.contains("listening on"))

            let file = directory.appendingPathComponent("write-keys").path
            try "\(Self.newKey)\n".write(toFile: file, atomically: true, encoding: .utf8)
            let server = try ServerProcess(["serve", "--store", url.description, "--host", "0.0.0.0", "--port", "0", "--write-key-file", file])
            defer { server.kill() }
            let port = try await server.port()
            _ = try await waitUntilHealthy(.tcp(port: port))
            let body = #"{"title": "Über den Schlüssel", "price": 12.99}"#
            let anonymous = try await RawHTTPClient.send("POST", "/publications", to: .tcp(port: port), body: body)
            #expect(anonymous.status == 401 && anonymous.headers["www-authenticate"] == #"Bearer realm="bookstore""#)
            let keyed = try await RawHTTPClient.send(
                "POST",
                "/publications",
                to: .tcp(port: port),
                body: body,
                headers: ["Authorization": "Bearer \(Self.newKey)"]
            )
            #expect(keyed.status == 201, "\(keyed.body)")
            let list = try await RawHTTPClient.send("GET", "/publications", to: .tcp(port: port))
            #expect(try JSONValue(parsing: Data(list.body.utf8))["total"]?.int == 5)
            #expect(try await server.terminate() == 0)
            #expect(server.output.contains("writes need a bearer key") && !server.output.contains(Self.newKey))
        }
    }

    @Test func loopbackAddressesAreTheLocalOnes() {
        for host in ["127.0.0.1", "127.3.2.1", "localhost", "LOCALHOST", "::1", "[::1]", "0:0:0:0:0:0:0:1"] {
            #expect(ServiceConfiguration.Address.tcp(host: host, port: 8080).isLocal, "\(host)")
        }
        for host in ["0.0.0.0", "::", "128.0.0.1", "10.0.0.1", "::2", "example.com", "localhost.example.com", ""] {
            #expect(!ServiceConfiguration.Address.tcp(host: host, port: 8080).isLocal, "\(host)")
        }
        #expect(ServiceConfiguration.Address.unixSocket(path: "/tmp/bookstore.sock").isLocal)
    }

    @Test func aKeyFileThatCannotServeSaysWhatWhereAndWhatToDo() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        func error(_ contents: String?) -> WriteKeyFileError? {
            let file = directory.appendingPathComponent(UUID().uuidString).path
            if let contents { try? contents.write(toFile: file, atomically: true, encoding: .utf8) }
            do {
                _ = try WriteKeys(contentsOfFile: file)
                return nil
            } catch {
                #expect(error.description.contains(file))
                return error
            }
        }
        #expect(error(nil)?.reason == .unreadable(reason: "no such file"))
        #expect(error("")?.reason == .noKey)
        #expect(error("# nothing yet\n\n")?.reason == .noKey)
        let short = error("\(Self.newKey)\nshort-key\n")
        #expect(short?.reason == .tooShort(length: 9) && short?.line == 2)
        #expect(short?.description.contains("openssl rand -base64 32") == true)
        #expect(error("two words in one key line\n")?.reason == .unusableCharacters)
        #expect(error("\"\(Self.newKey)\"")?.reason == .unusableCharacters)
        #expect(error("clé-\(Self.newKey)")?.reason == .unusableCharacters)
        // The description never shows a key, even a refused one.
        #expect(short?.description.contains("short-key") == false)
        #expect(try WriteKeys([Self.oldKey]).accepts(Self.oldKey))
        #expect(!(try WriteKeys([Self.oldKey]).accepts("")))
    }

    @Test func theDocumentOfAKeyedServiceDeclaresTheBearerSchemeOnEveryWrite() throws {
        let document = OpenAPIDocument.documentWithWriteKeys
        #expect(document["components"]?["securitySchemes"]?["writeKey"]?["scheme"]?.string == "bearer")
        var writes = 0
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for (method, operation) in item.objectValue ?? [:] where method != "parameters" {
                let isWrite = !["get", "head", "options"].contains(method)
                #expect((operation["security"] == [["writeKey": []]]) == isWrite, "\(method) \(path)")
                #expect((operation["responses"]?["401"] != nil) == isWrite, "\(method) \(path)")
                if isWrite { writes += 1 }
            }
        }
        #expect(writes == Self.writes.count)
        // A service without keys serves the document without them.
        #expect(OpenAPIDocument.document["components"]?["securitySchemes"] == nil)
    }

    /// Every publication with its pages, as the API reads them.
    static func everything(_ client: some TestClientProtocol) async throws -> [JSONValue] {
        let list = try await client.send(.get, "/publications?limit=100").json
        var all: [JSONValue] = []
        for item in list["items"]?.array ?? [] {
            all.append(item)
            all.append(try await client.send(.get, "/publications/\(item["id"]?.int ?? 0)/pages?limit=100").json)
        }
        return all
    }
}
