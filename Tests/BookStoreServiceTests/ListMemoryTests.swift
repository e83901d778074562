import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStoreService

/// What many clients listing the largest rows the service accepts cost the server in memory:
/// `bookstore serve` in a process of its own, its peak resident set read from
/// `/proc/PID/status` (`VmHWM`), which no allocation inside the process can hide.
@Suite("list memory")
struct ListMemoryTests {
    /// The server's peak resident memory while 64 clients list 100 of the largest rows at a
    /// time, about 70 MiB of it the idle server. Lists built whole (100 rows as objects, as
    /// resources and as JSON at once for each request) took it to 332 MiB on SQLite and
    /// 230 MiB on PostgreSQL; written ten rows at a time, to 123 and 84 MiB.
    static let peakBound = 160 * 1_048_576
    static let clients = 64
    static let rounds = 3

    /// Both ways a page is written: 100 rows in batches of ten, and 20 (the default limit)
    /// read whole and sent in one piece (in two runs 119–139 MiB on SQLite and 77–79 MiB on
    /// PostgreSQL, against 119–124 and 74–75 MiB for 100 rows).
    @Test(arguments: TestEngine.allCases, [100, 20])
    func sixtyFourClientsListingTheLargestRowsKeepTheServersMemoryBounded(backend: TestEngine, limit: Int) async throws {
        try await backend.withStoreURL { url in
            try await seed(url)
            let server = try ServerProcess(["serve", "--store", url.description, "--port", "0"])
            defer { server.kill() }
            let target = RawHTTPClient.Target.tcp(port: try await server.port())
            _ = try await waitUntilHealthy(target)
            let publication = try await Self.fillWithTheLargestRows(target)
            let beforeLists = try server.peakResidentBytes()

            let paths = ["/publications?limit=\(limit)&sort=-id", "/publications/\(publication)/pages?limit=\(limit)"]
            try await withThrowingTaskGroup(of: Void.self) { clients in
                for client in 0..<Self.clients {
                    clients.addTask {
                        for round in 0..<Self.rounds {
                            try await Self.expectAWholeListOfTheLargestRows(paths[(client + round) % 2], limit, target)
                        }
                    }
                }
                try await clients.waitForAll()
            }
            let peak = try server.peakResidentBytes()
            #expect(
                peak < Self.peakBound,
                "\(backend), limit \(limit): peak resident memory \(peak / 1_048_576) MiB (before the lists \(beforeLists / 1_048_576) MiB), bound \(Self.peakBound / 1_048_576) MiB"
            )

            // A client that leaves in the middle of a list cuts it short; that is no error of the server's.
            let read = try await RawHTTPClient.onThread {
                let connection = try RawHTTPClient.Connection(to: target)
                connection.limitReceiveBuffer(to: 4_096)
                connection.resetOnClose()
                try connection.write("GET /publications/\(publication)/pages?limit=100 HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return connection.receive(atLeast: 65_536)
            }
            #expect(read >= 65_536 && read < 4_000_000, "the client read \(read) bytes of an 8 MB list before leaving")
            _ = try await waitUntilHealthy(target)
            #expect(try await server.terminate() == 0)
            let errors = server.output.split(separator: "\n").filter { $0.contains(" error ") || $0.contains(" critical ") }
            #expect(errors.isEmpty, "\(errors.prefix(5))")
        }
    }

    /// A hundred publications whose every text is as long as the API takes, in the widest
    /// characters (four UTF-8 bytes each), and a publication with a hundred such pages.
    /// Returns the id of that publication.
    private static func fillWithTheLargestRows(_ target: RawHTTPClient.Target) async throws -> Int {
        func text(_ count: Int) -> String { String(repeating: "𝄞", count: count) }
        let publication =
            #"{"title":"\#(text(TextLimit.title))","price":1,"firstName":"\#(text(TextLimit.name))","#
            + #""lastName":"\#(text(TextLimit.name))","synopsis":"\#(text(TextLimit.synopsis))"}"#
        let page = #"{"text":"\#(text(TextLimit.pageText))"}"#
        var owner = 0
        for _ in 0..<100 {
            let created = try await RawHTTPClient.send("POST", "/publications", to: target, body: publication)
            try #require(created.status == 201, "\(created.body.prefix(500))")
            owner = try #require(created.headers["location"].flatMap { Int($0.split(separator: "/").last ?? "") })
        }
        for _ in 0..<100 {
            let created = try await RawHTTPClient.send("POST", "/publications/\(owner)/pages", to: target, body: page)
            try #require(created.status == 201, "\(created.body.prefix(500))")
        }
        return owner
    }

    /// One list, read whole: `count` items, each as long as was stored.
    private static func expectAWholeListOfTheLargestRows(_ path: String, _ count: Int, _ target: RawHTTPClient.Target) async throws {
        let response = try await RawHTTPClient.send("GET", path, to: target)
        try #require(response.status == 200, "\(path): \(response.body.prefix(500))")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any], "\(path)")
        let items = try #require(list["items"] as? [[String: Any]], "\(path)")
        #expect(items.count == count, "\(path)")
        let longest = items.compactMap { ($0["synopsis"] ?? $0["text"]) as? String }.map(\.unicodeScalars.count)
        #expect(longest.count == count && longest.allSatisfy { $0 == TextLimit.synopsis || $0 == TextLimit.pageText }, "\(path)")
    }
}
