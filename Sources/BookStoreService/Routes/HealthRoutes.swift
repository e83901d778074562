import HTTPTypes
import Hummingbird
import Persistence

/// `GET /health`: 200 `{"status": "ok", "model": "BookStore 5", "store": "sqlite"}` once the
/// store is open and current; 503 with `Retry-After` before, naming why — during a
/// migration with its progress (``MigrationProgress``'s members: step, stage, percentage,
/// time spent and time left); 503 `outdated` once another process (the next release) has
/// migrated the store since this service opened it, naming the store's version.
struct HealthRoutes: Sendable {
    let gate: StoreGate

    /// The route, relative to the root.
    var endpoints: RouteCollection<BookStoreRequestContext> {
        RouteCollection(context: BookStoreRequestContext.self)
            .get("health") { _, _ in
                let health = await health()
                // An outdated replica will not recover: it is to be replaced, not retried.
                let retry = health.httpStatus != .ok && health.status != "outdated"
                return EditedResponse(
                    status: health.httpStatus,
                    headers: retry ? [.retryAfter: String(gate.retryAfterSeconds)] : [:],
                    response: health
                )
            }
    }

    /// What `/health` answers now; the status page shows the same.
    func health() async -> Health {
        await gate.checkStillCurrent()
        var health = Health(status: "ok", model: gate.modelName, store: gate.storeKind)
        switch gate.phase {
        case .ready:
            break
        case .outdated(let error):
            health.status = "outdated"
            health.reason = "\(error.message); \(error.hint ?? "deploy the release that runs the store's version")"
        case .migrating(let report):
            health.status = "migrating"
            health.migration = report.progress()
        case .waitingForMigration(let version, let rolledBackFrom):
            health.status = "waiting"
            health.storeVersion = version
            health.reason = StoreGate.waitingReason(storeVersion: version, rolledBackFrom: rolledBackFrom, modelName: gate.modelName)
        case .starting:
            health.status = "starting"
        case .stopped:
            health.status = "stopping"
        }
        return health
    }
}

/// `/health`'s body: the service's state, and during a migration the progress's members
/// beside it (`{"status": "migrating", "model": …, "step": 2, "stage": "create instances", …}`).
struct Health: ResponseEncodable, Sendable {
    /// `ok`, `starting`, `migrating`, `waiting`, `outdated` or `stopping`.
    var status: String
    var model: String
    var store: String
    /// While waiting for another process to migrate the store: its version.
    var storeVersion: String?
    /// While waiting, why; once the store was migrated by another process, what happened
    /// and what to do.
    var reason: String?
    var migration: MigrationProgress?

    var httpStatus: HTTPResponse.Status { status == "ok" ? .ok : .serviceUnavailable }

    enum CodingKeys: String, CodingKey {
        case status, model, store, storeVersion, reason
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(model, forKey: .model)
        try container.encode(store, forKey: .store)
        try container.encodeIfPresent(storeVersion, forKey: .storeVersion)
        try container.encodeIfPresent(reason, forKey: .reason)
        // The progress's members sit beside the state's, as clients of earlier releases read them.
        try migration?.encode(to: encoder)
    }
}
