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

/// `GET /metrics`: what a dashboard reads off the service — the requests it answered, the
/// store's state and connections, and a migration's progress while one runs.
@Suite("metrics")
struct MetricsTests {
    /// `bookstore serve` as operators run it: every request it answered is counted by route,
    /// method and status, with its duration, and the store's state and connections are there.
    @Test(arguments: TestEngine.allCases)
    func theExecutableCountsItsRequestsByRouteAndStatus(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await seed(url)
            let server = try ServerProcess(["serve", "--store", url.description, "--port", "0"])
            defer { server.kill() }
            let port = try await server.port()
            _ = try await waitUntilHealthy(.tcp(port: port))
            func send(_ method: String, _ path: String, body: String? = nil) async throws -> Int {
                try await RawHTTPClient.send(method, path, to: .tcp(port: port), body: body).status
            }
            for _ in 0..<3 { #expect(try await send("GET", "/publications/1") == 200) }
            for _ in 0..<2 { #expect(try await send("GET", "/publications/12345") == 404) }
            #expect(try await send("GET", "/nowhere") == 404)
            #expect(try await send("POST", "/publications", body: #"{"title": "Gezählt", "price": 4.99}"#) == 201)
            #expect(try await send("POST", "/publications", body: #"{"title": "#) == 400)
            // A list past an offset is streamed, counted once its last row is written.
            for _ in 0..<2 { #expect(try await send("GET", "/publications?offset=1") == 200) }

            let scrape = try await RawHTTPClient.send("GET", "/metrics", to: .tcp(port: port))
            #expect(scrape.status == 200 && scrape.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try PrometheusText(scrape.body)
            func requests(_ route: String, _ method: String, _ status: Int) -> Double? {
                metrics.value(
                    "http_server_requests_total",
                    ["http_route": route, "http_request_method": method, "http_response_status_code": "\(status)"]
                )
            }
            #expect(requests("/publications/{id}", "GET", 200) == 3)
            #expect(requests("/publications/{id}", "GET", 404) == 2)
            #expect(requests("NotFound", "GET", 404) == 1)
            #expect(requests("/publications", "POST", 201) == 1)
            #expect(requests("/publications", "POST", 400) == 1)
            #expect(requests("/publications", "GET", 200) == 2)
            #expect(metrics.value("http_server_request_duration_seconds_count", ["http_route": "/publications", "http_request_method": "GET"]) == 2)
            #expect(metrics.types["http_server_requests_total"] == "counter")
            let durations = ["http_route": "/publications/{id}", "http_request_method": "GET", "http_response_status_code": "200"]
            #expect(metrics.types["http_server_request_duration_seconds"] == "histogram")
            #expect(metrics.value("http_server_request_duration_seconds_count", durations) == 3)
            #expect(metrics.value("http_server_request_duration_seconds_bucket", durations.merging(["le": "+Inf"]) { $1 }) == 3)
            #expect(try #require(metrics.value("http_server_request_duration_seconds_sum", durations)) > 0)
            // The scrape itself is the one request under way.
            #expect(metrics.value("http_server_active_requests", ["http_request_method": "GET"]) == 1)

            #expect(metrics.value("bookstore_store_state", ["state": "ready"]) == 1)
            #expect(metrics.samples.filter { $0.name == "bookstore_store_state" && $0.labels["state"] != "ready" }.map(\.value) == [0, 0, 0, 0, 0])
            #expect(metrics.value("bookstore_store_connections_open", ["role": "writer"]) == 1)
            #expect(metrics.value("bookstore_store_connections_in_use", ["role": "writer"]) == 0)
            #expect(metrics.value("bookstore_store_connections_waiting", ["role": "reader"]) == 0)
            #expect(metrics.samples(startingWith: "bookstore_migration_").isEmpty)
            #expect(try await server.terminate() == 0, "\(server.output)")

            // Turned off: no route, and the OpenAPI document does not list it.
            let quiet = try ServerProcess(["serve", "--store", url.description, "--port", "0", "--no-metrics"])
            defer { quiet.kill() }
            let quietPort = try await quiet.port()
            _ = try await waitUntilHealthy(.tcp(port: quietPort))
            #expect(try await RawHTTPClient.send("GET", "/metrics", to: .tcp(port: quietPort)).status == 404)
            let document = try await RawHTTPClient.send("GET", "/openapi.json", to: .tcp(port: quietPort))
            #expect(document.status == 200 && !document.body.contains("/metrics"))
            #expect(try await quiet.terminate() == 0, "\(quiet.output)")
        }
    }

    /// While the store is migrated on start-up, the scrape shows the migration as `/health`
    /// does; once it is done, its gauges are gone and the store's connections are there.
    @Test(arguments: TestEngine.allCases)
    func aMigrationShowsItsProgressWhileItRuns(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await copyFixture(version: 1, to: url)
            let hold = MigrationHold()
            let planned = Mutex<MigrationPlan?>(nil)
            var configuration = try makeService(url) { plan in
                planned.withLock { $0 = plan }
                try await hold.wait()
            }.configuration
            configuration.metrics = ServiceMetrics()
            let service = BookStoreService(configuration: configuration, logger: quietLogger)
            try await service.makeApplication().test(.router) { client in
                _ = try await waitUntilMigrating(client)
                let plan = try #require(planned.withLock { $0 })
                let during = try PrometheusText(try await client.send(.get, "/metrics").text)
                #expect(during.value("bookstore_store_state", ["state": "migrating"]) == 1)
                #expect(during.value("bookstore_store_state", ["state": "ready"]) == 0)
                #expect(during.value("bookstore_migration_step") == 1)
                #expect(during.value("bookstore_migration_steps") == Double(plan.steps.count))
                #expect(
                    during.value("bookstore_migration_info", ["source": plan.steps[0].source.name, "destination": plan.steps[0].destination.name])
                        == 1
                )
                #expect(during.value("bookstore_migration_stage", ["stage": "starting"]) == 1)
                #expect(during.samples.filter { $0.name == "bookstore_migration_stage" }.map(\.value).reduce(0, +) == 1)
                #expect(during.value("bookstore_migration_fraction_completed") == 0)
                #expect(during.value("bookstore_migration_elapsed_seconds").map { $0 >= 0 } == true)
                // Nothing done yet: no rate, no time left to tell.
                #expect(during.value("bookstore_migration_rows_per_second") == nil)
                #expect(during.value("bookstore_migration_remaining_seconds") == nil)
                #expect(during.samples(startingWith: "bookstore_store_connections").isEmpty)

                hold.release()
                try await waitUntilReady(client)
                let after = try PrometheusText(try await client.send(.get, "/metrics").text)
                #expect(after.value("bookstore_store_state", ["state": "ready"]) == 1)
                #expect(after.value("bookstore_store_state", ["state": "migrating"]) == 0)
                #expect(after.samples(startingWith: "bookstore_migration_").isEmpty)
                #expect(after.value("bookstore_store_connections_open", ["role": "writer"]) == 1)
                #expect(after.value("bookstore_store_connections_in_use", ["role": "reader"]) == 0)
            }
        }
    }

    /// The migration's gauges follow the reports the gate is given: rows a second within a
    /// stage counted from its first report, time left where the report has one.
    @Test func reportsGiveTheRateOfTheirStageAndTheTimeLeft() throws {
        let gate = StoreGate(store: .sqlite("/nonexistent/store.sqlite"), modelName: "BookStore 5")
        let start = ContinuousClock.now
        func progress(_ stage: MigrationProgress.Stage, done: Int, left: Duration? = nil) -> MigrationProgress {
            MigrationProgress(
                fractionCompleted: 0.25,
                stepFractionCompleted: 0.5,
                step: 2,
                stepCount: 3,
                sourceVersion: "BookStore 3",
                destinationVersion: "BookStore 4",
                stage: stage,
                subject: .entityMapping("PublicationToPublication"),
                instancesDone: done,
                instancesTotal: 10_000,
                estimatedTimeRemaining: left
            )
        }
        gate.move(to: .migrating(StoreGate.MigrationReport(progress(.createInstances, done: 1_000), startedAt: start, reportedAt: start)))
        func samples(at now: ContinuousClock.Instant) -> [String: Double] {
            Dictionary(gate.metricSamples(now: now).filter { $0.labels.isEmpty }.map { ($0.name, $0.value) }) { $1 }
        }
        var first = samples(at: start)
        #expect(first.removeValue(forKey: "bookstore_migration_rows_per_second") == nil)
        #expect(first["bookstore_migration_rows_done"] == 1_000 && first["bookstore_migration_rows_total"] == 10_000)

        // 2 500 rows in 2 s of the same stage, then 500 more in the next half second.
        gate.report(progress(.createInstances, done: 3_500, left: .seconds(9)), now: start + .seconds(2))
        #expect(samples(at: start + .seconds(2))["bookstore_migration_rows_per_second"] == 1_250)
        #expect(samples(at: start + .seconds(3))["bookstore_migration_remaining_seconds"] == 8)
        gate.report(progress(.createInstances, done: 4_000, left: .seconds(8)), now: start + .milliseconds(2_500))
        #expect(samples(at: start + .milliseconds(2_500))["bookstore_migration_rows_per_second"] == 1_200)
        #expect(samples(at: start + .seconds(3))["bookstore_migration_elapsed_seconds"] == 3)

        // A new stage counts from its own first report.
        gate.report(progress(.createRelationships, done: 0), now: start + .seconds(3))
        let next = gate.metricSamples(now: start + .seconds(3))
        #expect(!next.contains { $0.name == "bookstore_migration_rows_per_second" || $0.name == "bookstore_migration_remaining_seconds" })
        #expect(
            next.filter { $0.name == "bookstore_migration_stage" && $0.value == 1 }.map(\.labels) == [
                [.init(name: "stage", value: "create_relationships")]
            ]
        )
        gate.report(progress(.createRelationships, done: 600), now: start + .seconds(4))
        #expect(samples(at: start + .seconds(4))["bookstore_migration_rows_per_second"] == 600)
    }
}
