import BookStoreTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Persistence
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStoreService

/// Holds a migration before its first step until the test lets it go.
final class MigrationHold: Sendable {
    private let released = Mutex(false)

    /// The service's `beforeMigration` hook: waits (cancellably) for `release()`.
    func wait() async throws {
        while !released.withLock({ $0 }) {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func release() {
        released.withLock { $0 = true }
    }
}

/// Start-up on a store of an older model: listening at once, 503s with progress while the
/// store migrates, 200 after; a shutdown during the migration leaves the store as it was.
@Suite("start-up migration")
struct StartupMigrationTests {
    @Test(arguments: TestEngine.allCases)
    func aVersion1StoreIsMigratedWhileTheServiceAnswers503WithProgress(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await copyFixture(version: 1, to: url)
            let hold = MigrationHold()
            let service = try makeService(url) { _ in try await hold.wait() }
            try await service.makeApplication().test(.router) { client in
                // Wait for the migration to be planned and held.
                let health = try await waitUntilMigrating(client)
                #expect(health.status == .serviceUnavailable)
                #expect(health.headers[.retryAfter] == "5")
                var members = health.json.objectValue ?? [:]
                let elapsed = members.removeValue(forKey: "elapsedSeconds")?.int
                let expected: JSONValue = [
                    "status": "migrating", "model": "BookStore 5", "store": .string(backend.rawValue),
                    "step": 1, "stepCount": 4, "sourceVersion": "BookStore", "destinationVersion": "BookStore 2", "stage": "starting",
                    "entityMapping": nil, "entity": nil, "instancesDone": 0, "instancesTotal": 0, "percent": 0, "fractionCompleted": 0,
                    "stepFractionCompleted": 0, "estimatedSecondsRemaining": nil,
                ]
                #expect(JSONValue.object(members) == expected)
                // The time spent counts on between reports; nothing is done yet, so no estimate.
                try await Task.sleep(for: .milliseconds(1_100))
                let later = try await client.send(.get, "/health").json
                #expect(try #require(later["elapsedSeconds"]?.int) >= (elapsed ?? 0) + 1)
                for path in ["/publications", "/publications/1", "/publications/1/pages", "/pages/1"] {
                    let data = try await client.send(.get, path)
                    expectProblem(data, .serviceUnavailable)
                    #expect(data.headers[.retryAfter] == "5")
                    #expect(data.json["migration"]?["stepCount"]?.int == 4, "\(path)")
                    #expect(data.json["migration"]?["stage"]?.string == "starting")
                    #expect(data.json["migration"]?["elapsedSeconds"]?.int != nil && data.json["detail"]?.string?.contains("s elapsed") == true)
                }
                let write = try await client.send(.post, "/publications", json: #"{"title": "x"}"#)
                expectProblem(write, .serviceUnavailable)
                let page = try await client.send(.get, "/status")
                #expect(page.status == .ok && page.contentType == "text/html; charset=utf-8")
                #expect(page.text.contains(#""status":"migrating""#) && page.text.contains("progressbar"))

                hold.release()
                try await waitUntilReady(client)
                let ready = try await client.send(.get, "/health")
                #expect(ready.json == ["status": "ok", "model": "BookStore 5", "store": .string(backend.rawValue)])
                // Version 1 knew no authors: the names are there, empty; the synopsis is the title.
                let items = try await client.send(.get, "/publications").json["items"]?.array ?? []
                #expect(
                    items == [
                        [
                            "id": 1, "title": "The first book", "price": 10, "firstName": nil, "lastName": nil, "synopsis": "The first book",
                            "pageCount": 3,
                        ],
                        [
                            "id": 2, "title": "The second book", "price": 15, "firstName": nil, "lastName": nil, "synopsis": "The second book",
                            "pageCount": 3,
                        ],
                        [
                            "id": 3, "title": "The third book", "price": 10, "firstName": nil, "lastName": nil, "synopsis": "The third book",
                            "pageCount": 2,
                        ],
                        [
                            "id": 4, "title": "The fourth book", "price": 12, "firstName": nil, "lastName": nil, "synopsis": "The fourth book",
                            "pageCount": 4,
                        ],
                    ]
                )
            }
            let metadata = try await PersistentStore.metadata(at: url)
            #expect(try loadModels().current.isCompatible(with: metadata))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aShutdownDuringTheMigrationLeavesTheStoreAsItWas(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await copyFixture(version: 1, to: url)
            let hold = MigrationHold()
            let service = try makeService(url) { _ in try await hold.wait() }
            try await service.makeApplication().test(.router) { client in
                _ = try await waitUntilMigrating(client)
                // Returning shuts the application down gracefully, mid-migration.
            }
            let metadata = try await PersistentStore.metadata(at: url)
            #expect(try loadModels().model(version: 1).isCompatible(with: metadata))
            if case .sqlite(let path) = url.kind {
                let file = URL(fileURLWithPath: path)
                let folder = file.deletingLastPathComponent().path
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(file.lastPathComponent) } == [])
            }
        }
    }

    /// `--no-migrate`: the service waits, answering 503, without migrating; once another
    /// process (`bookstore migrate`) has migrated the store, it serves it.
    @Test(arguments: TestEngine.allCases)
    func withoutMigratingItWaitsForAnotherProcessToMigrate(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await copyFixture(version: 3, to: url)
            let service = try makeService(url, migrate: false)
            try await service.makeApplication().test(.router) { client in
                let health = try await firstHealth(after: "starting", client, timeout: .seconds(60))
                #expect(health.status == .serviceUnavailable)
                #expect(health.json["status"]?.string == "waiting" && health.json["storeVersion"]?.string == "BookStore 3", "\(health.text)")
                expectProblem(try await client.send(.get, "/publications"), .serviceUnavailable)
                // It did not migrate.
                #expect(try loadModels().model(version: 3).isCompatible(with: try await PersistentStore.metadata(at: url)))

                let other = try await BuiltCommand("bookstore", unsetEnvironment: ["BOOKSTORE_STORE"]).run(["migrate", "--store", url.description])
                #expect(other.status == 0, "\(other.stderr)")
                try await waitUntilReady(client)
                let list = try await client.send(.get, "/publications")
                #expect(list.status == .ok && list.json["total"]?.int == 4, "\(list.text)")
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aMissingStoreIsCreatedEmpty(_ backend: TestEngine) async throws {
        try await withReadyService(backend, seedVersion: nil) { client in
            let body = try await client.send(.get, "/publications").json
            #expect(body["total"]?.int == 0 && body["items"]?.array.isEmpty == true)
        }
    }
}

/// A migration report as `/health`, the 503s and the status page show it: the framework's
/// ``MigrationProgress`` encoded as it is, its times moved on to the moment of asking.
@Suite("migration status")
struct MigrationStatusTests {
    static func progress(stage: MigrationProgress.Stage, subject: MigrationProgress.Subject?) -> MigrationProgress {
        MigrationProgress(
            fractionCompleted: 0.4,
            stepFractionCompleted: 0.2,
            step: 3,
            stepCount: 4,
            sourceVersion: "BookStore 3",
            destinationVersion: "BookStore 4",
            stage: stage,
            subject: subject,
            instancesDone: 300,
            instancesTotal: 1_000,
            elapsed: .seconds(10),
            estimatedTimeRemaining: .seconds(20)
        )
    }

    static func members(_ progress: MigrationProgress) -> [String: JSONValue] {
        JSONValue(encoding: progress).objectValue ?? [:]
    }

    @Test func theTimesMoveOnBetweenReports() {
        let reported = ContinuousClock.now
        let report = StoreGate.MigrationReport(
            Self.progress(stage: .createInstances, subject: .entityMapping("PublicationToPublication")),
            startedAt: reported - .seconds(10),
            reportedAt: reported
        )
        let members = Self.members(report.progress(at: reported + .milliseconds(5_500)))
        #expect(members["elapsedSeconds"] == 15 && members["estimatedSecondsRemaining"] == 14)
        #expect(members["entityMapping"] == "PublicationToPublication" && members["entity"] == .null)
        #expect(members["percent"] == 40 && members["instancesDone"] == 300 && members["instancesTotal"] == 1_000)
        #expect(members["stepFractionCompleted"] == 0.2 && members["stage"] == "create instances")
        // A stage that runs past its estimate shows nothing left, never less.
        #expect(Self.members(report.progress(at: reported + .seconds(60)))["estimatedSecondsRemaining"] == 0)
        #expect(report.progress(at: reported + .seconds(2)).timesText == "12 s elapsed, about 18 s left")
    }

    @Test func validationNamesTheEntityNotAnEntityMapping() {
        let members = Self.members(Self.progress(stage: .validateAndSave, subject: .entity("Page")))
        #expect(members["entity"] == "Page" && members["entityMapping"] == .null && members["stage"] == "validate and save")
    }

    @Test func beforeAnyRateThereIsNoEstimate() throws {
        var progress = Self.progress(stage: .inPlace, subject: nil)
        progress.estimatedTimeRemaining = nil
        #expect(Self.members(progress)["estimatedSecondsRemaining"] == JSONValue.null)
        #expect(progress.timesText.hasSuffix("time left not yet known"))
    }

    /// A client reads back what the service wrote: the report is one Codable value.
    @Test func aReportReadsBackAsItWasWritten() throws {
        for stage in MigrationProgress.Stage.allCases {
            for subject: MigrationProgress.Subject? in [nil, .entityMapping("BookToPublication"), .entity("Page")] {
                let progress = Self.progress(stage: stage, subject: subject)
                let read = try JSONDecoder().decode(MigrationProgress.self, from: Response.jsonEncoder().encode(progress))
                #expect(read == progress)
            }
        }
    }

    @Test func theStatusPageShowsTheTimes() {
        #expect(StatusPage.template.contains("Time left") && StatusPage.template.contains("Elapsed") && StatusPage.template.contains("health.entity"))
    }
}

extension MigrationStatusTests {
    /// Reports count their time from the migration's first status, which the service makes
    /// before it waits for the lock and plans again; the migrator's own clock starts later.
    @Test func theElapsedTimeNeverGoesBackFromOneReportToTheNext() {
        let gate = StoreGate(store: .sqlite("unused.sqlite"), modelName: "BookStore 5")
        let started = ContinuousClock.now
        gate.move(to: .migrating(StoreGate.MigrationReport(Self.progress(stage: .inPlace, subject: nil), startedAt: started, reportedAt: started)))
        var report = Self.progress(stage: .createInstances, subject: .entityMapping("PublicationToPublication"))
        report.elapsed = .seconds(1)
        gate.report(report, now: started + .seconds(5))
        guard case .migrating(let current) = gate.phase else {
            Issue.record("not migrating: \(gate.phase)")
            return
        }
        #expect(current.startedAt == started)
        #expect(Self.members(current.progress(at: started + .seconds(6)))["elapsedSeconds"] == 6)
    }
}

/// A list is written batch by batch after its IDs are read: what happens to its rows meanwhile.
@Suite("list batches")
struct ListBatchTests {
    /// Collects what a response body writes.
    final class Collected: Sendable {
        let bytes = Mutex<[UInt8]>([])
    }

    struct CollectingWriter: ResponseBodyWriter {
        let collected: Collected
        mutating func write(_ buffer: ByteBuffer) async throws {
            collected.bytes.withLock { $0 += buffer.readableBytesView }
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    @Test(arguments: TestEngine.allCases)
    func rowsDeletedOrNoLongerMatchingWhileTheListIsWrittenAreLeftOut(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await seed(url)
            let container = try await PersistentContainer.open(model: try loadModels().current, store: url, logger: quietLogger)
            let context = container.newContext()
            for index in 1...25 {
                let publication = try context.insertObject(entityName: "Publication")
                publication.setValue(.string("Match \(index)"), forKey: "title")
                publication.setValue(.double(Double(index)), forKey: "price")
            }
            try await context.save()

            let query = try ListQuery.publications([("q", "match"), ("limit", "30"), ("sort", "price")])
            let list = try await PublicationRepository(container: container).publications(query)
            // Thirty rows are more than one read takes: the IDs first, the rows in batches.
            guard case .inBatches(let ids, _) = list.rows else {
                Issue.record("a page of 30 was read whole")
                return
            }
            #expect(ids.count == 25)
            // The first batch is read; before the second and third are, one row stops matching and one goes.
            let changing = container.newContext()
            try await changing.existingObject(with: ids[14]).setValue("Renamed", forKey: "title")
            changing.delete(try await changing.existingObject(with: ids[21]))
            try await changing.save()

            let collected = Collected()
            try await list.response(logger: quietLogger).body.write(CollectingWriter(collected: collected))
            let body = try JSONValue(parsing: Data(collected.bytes.withLock { $0 }))
            let titles = body["items"]?.array.compactMap { $0["title"]?.string } ?? []
            #expect(titles == (1...25).filter { $0 != 15 && $0 != 22 }.map { "Match \($0)" })
            #expect(body["total"]?.int == 25 && body["limit"]?.int == 30 && body["offset"]?.int == 0)
            await container.store.close()
        }
    }
}
