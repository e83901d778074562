import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
@testable import BookStoreService

/// Requests that race one another over the same rows: whatever the order they land in, no
/// page outlives its publication and a row is deleted once.
@Suite("racing requests")
struct RaceTests {
    /// The race happened when a round has both pages that were created (before the delete
    /// landed) and pages refused (after it); rounds go on, each with a new publication, until
    /// one has both, and the test fails if none of twenty does.
    @Test(arguments: Backend.allCases)
    func pagesCreatedWhileTheirPublicationIsDeletedDoNotOutliveIt(_ backend: Backend) async throws {
        try await withReadyService(backend) { client in
            var raced = false
            for round in 1...20 where !raced {
                let created = try await client.send(.post, "/publications", json: #"{"title": "Racing \#(round)", "price": 1}"#)
                let publication = try #require(created.json["id"]?.int, "\(created.text)")
                let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, Int?).self) { group in
                    for number in 1...40 {
                        group.addTask {
                            let response = try await client.send(.post, "/publications/\(publication)/pages", json: #"{"number": \#(number), "text": "Racing"}"#)
                            return (response.status, response.status == .created ? response.json["id"]?.int : nil)
                        }
                        if number == 10 {
                            group.addTask { (try await client.send(.delete, "/publications/\(publication)").status, nil) }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.filter { $0.0 == .noContent }.count == 1, "the delete succeeded once")
                #expect(answers.allSatisfy { [.created, .noContent, .notFound].contains($0.0) }, "\(answers.map(\.0.code))")
                #expect(try await client.send(.get, "/publications/\(publication)").status == .notFound)
                let pages = answers.compactMap(\.1)
                for id in pages {
                    let page = try await client.send(.get, "/pages/\(id)")
                    #expect(page.status == .notFound, "page \(id) was created and outlived its publication: \(page.text)")
                }
                raced = !pages.isEmpty && answers.contains { $0.0 == .notFound }
            }
            #expect(raced, "in twenty rounds the delete never landed between page creations")
        }
    }

    @Test(arguments: Backend.allCases)
    func aPageDeletedByTenRequestsAtOnceIsDeletedOnce(_ backend: Backend) async throws {
        try await withReadyService(backend) { client in
            let id = try #require(try await client.send(.get, "/publications/1/pages").json["items"]?[0]?["id"]?.int)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 1...10 { group.addTask { try await client.send(.delete, "/pages/\(id)").status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .noContent }.count == 1, "\(statuses.map(\.code))")
            #expect(statuses.filter { $0 == .notFound }.count == 9, "\(statuses.map(\.code))")
        }
    }
}
