import BookStoreService
import BookStoreTesting
import Foundation
import Persistence
import PersistenceTesting
import Testing

/// The `bookstore` command at a size users have, as a user runs it: `seed --count 10000`
/// (generated books shaped like users': prices with cents, non-ASCII and one-word authors,
/// books without one), `migrate`, then `serve` answering health and lists.
@Suite("bookstore at 10 000 books")
struct CommandLineAtSizeTests {
    static let generated = 10_000
    static let command = BuiltCommand("bookstore", unsetEnvironment: ["BOOKSTORE_STORE"])

    @Test(arguments: [TestEngine.sqlite, .postgres])
    func seedsMigratesAndServes(backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            let store = url.description
            let seed = try await Self.command.run(["seed", "--model-version", "2", "--count", "\(Self.generated)", "--store", store])
            #expect(seed.status == 0, "\(seed.stderr)")
            #expect(seed.stdout.contains("\(Self.generated + 4) books"), "\(seed.stdout)")
            let migrate = try await Self.command.run(["migrate", "--store", store])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(migrate.stdout.contains("to BookStore 5 in 3 steps"), "\(migrate.stdout)")

            let server = try ServerProcess(["serve", "--store", store, "--port", "0"])
            defer { server.kill() }
            let port = try await server.port()
            // Listening comes first; the store is checked (current here) meanwhile, answered with 503.
            var health = try await RawHTTPClient.send("GET", "/health", to: .tcp(port: port))
            let deadline = ContinuousClock.now + .seconds(60)
            while health.status == 503, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                health = try await RawHTTPClient.send("GET", "/health", to: .tcp(port: port))
            }
            #expect(health.status == 200, "\(health.body)")
            #expect(health.body.contains(#""model":"BookStore 5""#))
            let page = try await RawHTTPClient.send("GET", "/publications?limit=20&offset=9000", to: .tcp(port: port))
            #expect(page.status == 200)
            let list = try JSONValue(parsing: Data(page.body.utf8))
            #expect(list["items"]?.array.count == 20)
            #expect(list["total"]?.int == Self.generated + 4)
            // Generated book n has id n + 4 (the catalogue's four come first).
            func publication(_ number: Int) async throws -> JSONValue {
                let answer = try await RawHTTPClient.send("GET", "/publications/\(number + 4)", to: .tcp(port: port))
                #expect(answer.status == 200, "\(answer.body)")
                return try JSONValue(parsing: Data(answer.body.utf8))
            }
            let withoutAuthor = try await publication(7)
            #expect(withoutAuthor["firstName"] == .null && withoutAuthor["lastName"] == .null)
            let nonASCII = try await publication(15)
            #expect(nonASCII["firstName"]?.string == "Émilie" && nonASCII["lastName"]?.string == "Turing")
            let oneWord = try await publication(9)
            #expect(oneWord["firstName"]?.string == "Lovelace" && oneWord["lastName"] == .null)
            #expect(oneWord["synopsis"]?.string == "Generated book 9")
            let status = try await server.terminate()
            #expect(status == 0, "\(server.output.suffix(2000))")
        }
    }
}
