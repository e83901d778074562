import HTTPTypes
import Hummingbird
import Persistence
import Synchronization

/// The service's way to its store: routes ask it for the container, and until the store
/// is open and current it answers for them with a 503 saying why and for how long.
///
/// The ``StoreService`` moves it along: `starting` → (`migrating` | `waitingForMigration`)
/// → `ready` → `stopped`.
///
/// ```swift
/// let container = try gate.container()   // or a 503 Problem with Retry-After
/// ```
public final class StoreGate: Sendable {
    public enum Phase: Sendable {
        /// Reading the store's metadata, creating it when missing, opening it.
        case starting
        /// Migrating to the current model; the status is the latest report.
        case migrating(MigrationStatus)
        /// Outdated and told not to migrate (`--no-migrate`): another process must migrate it.
        case waitingForMigration(storeVersion: String)
        case ready(PersistentContainer)
        /// Shutting down or closed.
        case stopped
    }

    /// What `/health` names the store: `sqlite`, `postgres` or `memory`.
    public let storeKind: String
    /// The model the service serves: `BookStore 5`.
    public let modelName: String
    /// Seconds a client is asked to wait (`Retry-After`) while the store is not ready.
    public let retryAfterSeconds: Int
    private let state = Mutex<Phase>(.starting)

    public init(store: StoreURL, modelName: String, retryAfterSeconds: Int = 5) {
        switch store.kind {
        case .sqlite: storeKind = "sqlite"
        case .postgres: storeKind = "postgres"
        case .memory: storeKind = "memory"
        }
        self.modelName = modelName
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var phase: Phase { state.withLock { $0 } }

    func move(to phase: Phase) {
        state.withLock { $0 = phase }
    }

    /// Records a migration report, timed from the migration's first status, unless the
    /// migration is over already (reports arrive on their own task and may trail the end).
    func report(_ progress: MigrationProgress, now: ContinuousClock.Instant = .now) {
        state.withLock { phase in
            if case .migrating(let current) = phase { phase = .migrating(MigrationStatus(progress, startedAt: current.startedAt, now: now)) }
        }
    }

    /// The open container of a current store.
    ///
    /// - Throws: ``Problem`` 503 with `Retry-After` and, during a migration, its progress.
    public func container() throws(Problem) -> PersistentContainer {
        let phase = self.phase
        if case .ready(let container) = phase { return container }
        throw unavailable(phase)
    }

    private func unavailable(_ phase: Phase) -> Problem {
        let headers: HTTPFields = [.retryAfter: String(retryAfterSeconds)]
        switch phase {
        case .migrating(let status):
            return Problem(.serviceUnavailable, type: .unavailable, title: "The store is being migrated",
                           detail: "the store is migrating to \(modelName): step \(status.step) of \(status.stepCount), \(status.sourceVersion) → \(status.destinationVersion), \(status.stage), \(status.percent)%, \(status.timesText()); retry in \(retryAfterSeconds) seconds",
                           extensions: ["migration": .object(status.members())], headers: headers)
        case .waitingForMigration(let version):
            return Problem(.serviceUnavailable, type: .unavailable, title: "The store needs migrating",
                           detail: "the store is at \(version) and this service serves \(modelName); it was started with --no-migrate, so it waits for `bookstore migrate` to migrate the store",
                           headers: headers)
        case .starting:
            return Problem(.serviceUnavailable, type: .unavailable, title: "The service is starting",
                           detail: "the store is being opened; retry in \(retryAfterSeconds) seconds", headers: headers)
        case .stopped, .ready:
            return Problem(.serviceUnavailable, type: .unavailable, title: "The service is shutting down",
                           detail: "the store is closed", headers: headers)
        }
    }
}
