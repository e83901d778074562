import Foundation
import PersistenceTesting
import Testing

@testable import BookStoreService
@testable import Persistence

/// A full disk under the store is the client's 507 problem, not a 500, and nothing is lost:
/// once there is space again, the same request succeeds. A migration that fills the disk on
/// start-up stops the server gracefully, saying why, without a cancellation error.
@Suite("the service on a full disk")
struct FullDiskTests {
    @Test(arguments: [TestEngine.sqlite, .postgres])
    func aFullDiskIsA507AndTheSameRequestSucceedsOnceThereIsSpace(backend: TestEngine) async throws {
        let small = try SmallFileSystem(bytes: 32 << 20)
        defer { small.unmount() }
        if backend == .postgres {
            try await TestPostgres.withDatabase(inTablespaceAt: small.folder) { url in try await fillUp(url, small: small) }
        } else {
            try await fillUp(.sqlite(small.folder.appendingPathComponent("bookstore.sqlite").path), small: small)
        }
    }

    private func fillUp(_ url: StoreURL, small: SmallFileSystem) async throws {
        // By the command, where the file system is mounted (SQLite in this process would not
        // find a store on it when it is mounted without root).
        let seeded = try await BuiltCommand("bookstore", unsetEnvironment: ["BOOKSTORE_STORE"]).runningOn(small)
            .run(["seed", "--model-version", "5", "--store", url.description])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let server = try ServerProcess(["serve", "--store", url.description, "--port", "0"], on: small)
        defer { server.kill() }
        let port = try await server.port()
        try small.fill(leaving: 0)
        // Text no compression shrinks: PostgreSQL compresses a long value before storing
        // it, and a synopsis of one repeated letter fitted in the free space of pages it
        // already had, so the disk never filled.
        func body() -> String {
            let synopsis = (0..<250).map { _ in UUID().uuidString }.joined()
            return #"{"title": "Written on a full disk", "price": 1, "synopsis": "\#(synopsis)"}"#
        }
        var full: RawHTTPClient.Response?
        for _ in 0..<500 where full == nil {
            let response = try await RawHTTPClient.send("POST", "/publications", to: .tcp(port: port), body: body())
            if response.status == 507 { full = response } else { #expect(response.status == 201, "\(response.body)") }
        }
        let refused = try #require(full, "the disk never filled up")
        #expect(refused.headers["content-type"] == "application/problem+json")
        let problem = try JSONValue(parsing: Data(refused.body.utf8))
        #expect(problem["type"]?.string == "/problems/insufficient-storage")
        #expect(problem["detail"]?.string?.contains("nothing was saved") == true, "\(refused.body)")

        small.empty()
        #expect(try await RawHTTPClient.send("POST", "/publications", to: .tcp(port: port), body: body()).status == 201)
        #expect(try await server.terminate() == 0)
        #expect(!server.output.contains(" 500 ") && !server.output.contains("status=500"), "\(server.output)")
    }

    /// SQLite: what is under test is how the service stops on a migration's storage error,
    /// the same error on either engine. A PostgreSQL migration filling its disk needs a
    /// store thousands of books large to fill a disk that still lets sessions start; it is
    /// tested so, through `bookstore migrate`, in `StorageFaultTests`.
    @Test func aMigrationThatFillsTheDiskStopsTheServerSayingWhyWithoutACancellationError() async throws {
        let small = try SmallFileSystem(bytes: 32 << 20)
        defer { small.unmount() }
        let url = StoreURL.sqlite(small.folder.appendingPathComponent("bookstore.sqlite").path)
        try await copyFixture(version: 1, to: url)
        try small.fill(leaving: 8 << 10)
        let server = try ServerProcess(["serve", "--store", url.description, "--port", "0"], on: small)
        defer { server.kill() }
        let status = try await server.waitForExit(timeout: .seconds(60))
        let output = server.output
        #expect(status == 1, "\(output)")
        #expect(output.contains("error: \(url): the disk is full: "), "\(output)")
        #expect(!output.contains("CancellationError"), "\(output)")
        #expect(!output.contains("report this"), "\(output)")
    }
}
