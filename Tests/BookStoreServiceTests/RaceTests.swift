import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
@testable import BookStoreService

/// Requests that race one another over the same rows: whatever the order they land in, no
/// page outlives its publication and a row is deleted once.
@Suite("racing requests")
struct RaceTests {
    @Test(arguments: Backend.allCases)
    func pagesCreatedWhileTheirPublicationIsDeletedDoNotOutliveIt(_ backend: Backend) async throws {
        try await withReadyService(backend) { client in
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, Int?).self) { group in
                for number in 1...40 {
                    group.addTask {
                        let response = try await client.send(.post, "/publications/2/pages", json: #"{"number": \#(number), "text": "Racing"}"#)
                        return (response.status, response.status == .created ? response.json["id"]?.int : nil)
                    }
                    if number == 10 {
                        group.addTask { (try await client.send(.delete, "/publications/2").status, nil) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.0 == .noContent }.count == 1, "the delete succeeded")
            #expect(answers.allSatisfy { [.created, .noContent, .notFound].contains($0.0) }, "\(answers.map(\.0.code))")
            #expect(try await client.send(.get, "/publications/2").status == .notFound)
            for id in answers.compactMap(\.1) {
                let page = try await client.send(.get, "/pages/\(id)")
                #expect(page.status == .notFound, "page \(id) was created and outlived its publication: \(page.text)")
            }
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
