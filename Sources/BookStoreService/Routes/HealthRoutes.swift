import HTTPTypes
import Hummingbird

/// `GET /health`: 200 `{"status": "ok", "model": "BookStore 5", "store": "sqlite"}` once the
/// store is open and current; 503 with `Retry-After` before, naming why — during a
/// migration with its step, stage, percentage, time spent and time left.
struct HealthRoutes: Sendable {
    let gate: StoreGate

    func add(to table: inout RouteTable) {
        table.add(.get, "/health") { _, _ in
            let (status, body) = health()
            var response = Response.json(.object(body), status: status)
            if status != .ok { response.headers[.retryAfter] = String(gate.retryAfterSeconds) }
            return response
        }
    }

    /// The status and body `/health` answers with now; the status page shows the same.
    func health() -> (HTTPResponse.Status, [String: JSONValue]) {
        var body: [String: JSONValue] = ["model": .string(gate.modelName), "store": .string(gate.storeKind)]
        switch gate.phase {
        case .ready:
            body["status"] = "ok"
            return (.ok, body)
        case .migrating(let migration):
            body.merge(migration.members()) { _, new in new }
            body["status"] = "migrating"
            return (.serviceUnavailable, body)
        case .waitingForMigration(let version):
            body["status"] = "waiting"
            body["storeVersion"] = .string(version)
            return (.serviceUnavailable, body)
        case .starting:
            body["status"] = "starting"
            return (.serviceUnavailable, body)
        case .stopped:
            body["status"] = "stopping"
            return (.serviceUnavailable, body)
        }
    }
}
