import Foundation
import HTTPTypes
import HummingbirdTesting
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStoreService

/// Requests that race one another over the same rows: whatever the order they land in, no
/// page outlives its publication and a row is deleted once.
@Suite("racing requests")
struct RaceTests {
    /// Four clients keep adding pages to a publication; once five are in, a fifth client
    /// deletes it, and the others go on until they are refused. The race happened when a
    /// page request was in flight while the delete was (its start before the delete's end,
    /// its end after the delete's start); rounds go on, each with a new publication, until
    /// one shows it, and the test fails if none of twenty does. Whatever the order, no page
    /// outlives its publication.
    @Test(arguments: TestEngine.allCases)
    func pagesCreatedWhileTheirPublicationIsDeletedDoNotOutliveIt(_ backend: TestEngine) async throws {
        try await withReadyService(backend) { client in
            var overlapping = 0
            for round in 1...20 where overlapping == 0 {
                let created = try await client.send(.post, "/publications", json: #"{"title": "Racing \#(round)", "price": 1}"#)
                let publication = try #require(created.json["id"]?.int, "\(created.text)")
                let pagesIn = PageCount()
                let (adds, deletion) = try await withThrowingTaskGroup(of: RaceEvent.self) { group in
                    for worker in 0..<4 {
                        group.addTask {
                            var answers: [RaceEvent.Add] = []
                            for number in 1...200 {
                                let started = ContinuousClock.now
                                let response = try await client.send(
                                    .post,
                                    "/publications/\(publication)/pages",
                                    json: #"{"number": \#(worker * 1000 + number), "text": "Racing"}"#
                                )
                                answers.append(
                                    .init(
                                        status: response.status,
                                        page: response.status == .created ? response.json["id"]?.int : nil,
                                        started: started,
                                        ended: .now
                                    )
                                )
                                if response.status == .created { pagesIn.add() } else { break }
                            }
                            return .adds(answers)
                        }
                    }
                    group.addTask {
                        while pagesIn.value < 5 { try await Task.sleep(for: .milliseconds(1)) }
                        let started = ContinuousClock.now
                        let status = try await client.send(.delete, "/publications/\(publication)").status
                        return .delete(status: status, started: started, ended: .now)
                    }
                    var adds: [RaceEvent.Add] = []
                    var deletion: (status: HTTPResponse.Status, started: ContinuousClock.Instant, ended: ContinuousClock.Instant)?
                    for try await event in group {
                        switch event {
                        case .adds(let some): adds += some
                        case .delete(let status, let started, let ended): deletion = (status, started, ended)
                        }
                    }
                    return (adds, try #require(deletion))
                }
                #expect(deletion.status == .noContent, "the delete succeeded")
                #expect(adds.allSatisfy { [.created, .notFound].contains($0.status) }, "\(adds.map(\.status.code))")
                #expect(try await client.send(.get, "/publications/\(publication)").status == .notFound)
                for id in adds.compactMap(\.page) {
                    let page = try await client.send(.get, "/pages/\(id)")
                    #expect(page.status == .notFound, "page \(id) was created and outlived its publication: \(page.text)")
                }
                overlapping = adds.filter { $0.started < deletion.ended && $0.ended > deletion.started }.count
            }
            #expect(overlapping > 0, "in twenty rounds no page request was in flight while the delete was")
        }
    }

    /// How many pages the clients have added so far.
    final class PageCount: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    /// What a client of the race saw.
    enum RaceEvent: Sendable {
        struct Add: Sendable {
            let status: HTTPResponse.Status
            let page: Int?
            let started: ContinuousClock.Instant
            let ended: ContinuousClock.Instant
        }
        case adds([Add])
        case delete(status: HTTPResponse.Status, started: ContinuousClock.Instant, ended: ContinuousClock.Instant)
    }

    @Test(arguments: TestEngine.allCases)
    func aPageDeletedByTenRequestsAtOnceIsDeletedOnce(_ backend: TestEngine) async throws {
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
