import HTTPTypes
import Hummingbird
import Persistence
import Synchronization

/// The service's way to its store: routes ask it for the container, and until the store
/// is open and current it answers for them with a 503 saying why and for how long.
///
/// The `StoreService` moves it along: `starting` → (`migrating` | `waitingForMigration`)
/// → `ready` → `stopped`.
///
/// ```swift
/// let container = try gate.container()   // or a 503 Problem with Retry-After
/// ```
public final class StoreGate: Sendable {
    /// Where the store is on its way to being served.
    public enum Phase: Sendable {
        /// Reading the store's metadata, creating it when missing, opening it.
        case starting
        /// Migrating to the current model; the latest report and when it came.
        case migrating(MigrationReport)
        /// Outdated and not to be migrated here: told so (`--no-migrate`), or the store was
        /// migrated back from `rolledBackFrom` (a rollback), which start-up does not undo.
        /// Another process must migrate it.
        case waitingForMigration(storeVersion: String, rolledBackFrom: String? = nil)
        /// Open at the current model version and serving, through this container.
        case ready(PersistentContainer)
        /// Another process migrated the store to another model version since this service
        /// opened it (the next release, online): it can no longer serve it.
        case outdated(StoreError)
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
    /// When the open store's version was last checked against its metadata.
    private let checked = Mutex<ContinuousClock.Instant?>(nil)
    /// How often, at most, ``checkStillCurrent()`` reads the store's metadata.
    static let versionCheckInterval: Duration = .seconds(2)

    /// A gate for `store`, served at `modelName`, starting.
    public init(store: StoreURL, modelName: String, retryAfterSeconds: Int = 5) {
        storeKind = store.scheme
        self.modelName = modelName
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The migration's latest report, timed on the service's clock: the elapsed time counts
    /// from when the service planned the migration (before it waited for the lock), so it
    /// never goes back from one report to the next, and both times move on between reports.
    public struct MigrationReport: Sendable {
        /// The progress as the migrator last reported it.
        public var progress: MigrationProgress
        /// When the service began the migration (planned it).
        public let startedAt: ContinuousClock.Instant
        /// When ``progress`` was reported.
        public var reportedAt: ContinuousClock.Instant
        /// The first report of the current step, stage and subject: where its rate counts from.
        var rateBase: (instancesDone: Int, reportedAt: ContinuousClock.Instant)

        /// Rows (instances) a second in the current stage and subject, since its first
        /// report; `nil` until a later report of it has counted some.
        public var rowsPerSecond: Double? {
            let rows = progress.instancesDone - rateBase.instancesDone
            let seconds = (reportedAt - rateBase.reportedAt).seconds
            guard rows > 0, seconds > 0 else { return nil }
            return Double(rows) / seconds
        }

        /// This report followed by `next`, reported at `now`: the rate keeps its base while
        /// the step, stage and subject stay the same.
        func followed(by next: MigrationProgress, at now: ContinuousClock.Instant) -> MigrationReport {
            var report = MigrationReport(next, startedAt: startedAt, reportedAt: now)
            if (next.step, next.stage, next.subject) == (progress.step, progress.stage, progress.subject),
                next.instancesDone >= rateBase.instancesDone
            {
                report.rateBase = rateBase
            }
            return report
        }

        /// Before the migrator's first report: the plan's first step, nothing done.
        public init(startOf plan: MigrationPlan, at now: ContinuousClock.Instant = .now) {
            self.init(MigrationProgress(startOf: plan), startedAt: now, reportedAt: now)
        }

        /// A report of `progress`, for a migration begun at `startedAt`, made at `reportedAt`.
        public init(_ progress: MigrationProgress, startedAt: ContinuousClock.Instant, reportedAt: ContinuousClock.Instant = .now) {
            self.progress = progress
            self.startedAt = startedAt
            self.reportedAt = reportedAt
            self.rateBase = (progress.instancesDone, reportedAt)
        }

        /// The progress as of `now`.
        public func progress(at now: ContinuousClock.Instant = .now) -> MigrationProgress {
            var current = progress.movedOn(by: now - reportedAt)
            current.elapsed = max(.zero, now - startedAt)
            return current
        }
    }

    /// The phase now.
    public var phase: Phase { state.withLock { $0 } }

    func move(to phase: Phase) {
        state.withLock { $0 = phase }
    }

    /// Records a migration report, timed from the migration's first status, unless the
    /// migration is over already (reports arrive on their own task and may trail the end).
    func report(_ progress: MigrationProgress, now: ContinuousClock.Instant = .now) {
        state.withLock { phase in
            if case .migrating(let current) = phase { phase = .migrating(current.followed(by: progress, at: now)) }
        }
    }

    /// While ready: reads the store's metadata (at most every two seconds) and, when
    /// another process has migrated the store to another version since, moves to
    /// `outdated`, so that `/health` fails and an orchestrator replaces this replica.
    func checkStillCurrent(now: ContinuousClock.Instant = .now) async {
        guard case .ready(let container) = phase else { return }
        let due = checked.withLock { last in
            guard last.map({ now - $0 >= Self.versionCheckInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due, let migrated = await container.store.migratedSinceOpened() else { return }
        state.withLock { phase in
            if case .ready = phase { phase = .outdated(migrated) }
        }
    }

    /// Why a service waits for another process to migrate its store.
    static func waitingReason(storeVersion: String, rolledBackFrom: String?, modelName: String) -> String {
        guard let rolledBackFrom else {
            return
                "the store is at \(storeVersion) and this service serves \(modelName); it was started with --no-migrate, so it waits for `bookstore migrate` to migrate the store"
        }
        return
            "the store was migrated back from \(rolledBackFrom) to \(storeVersion) (a rollback) and this service serves \(modelName); start-up does not undo a rollback, so it waits for `bookstore migrate` to migrate the store forward again, or for the release that serves \(storeVersion) to replace it"
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
        case .migrating(let report):
            let progress = report.progress()
            return Problem(
                .serviceUnavailable,
                type: .unavailable,
                title: "The store is being migrated",
                detail:
                    "the store is migrating to \(modelName): step \(progress.step) of \(progress.stepCount), \(progress.sourceVersion) → \(progress.destinationVersion), \(progress.stage.rawValue), \(progress.percent)%, \(progress.timesText); retry in \(retryAfterSeconds) seconds",
                extensions: ["migration": JSONValue(encoding: progress)],
                headers: headers
            )
        case .waitingForMigration(let version, let rolledBackFrom):
            return Problem(
                .serviceUnavailable,
                type: .unavailable,
                title: "The store needs migrating",
                detail: Self.waitingReason(storeVersion: version, rolledBackFrom: rolledBackFrom, modelName: modelName),
                headers: headers
            )
        case .outdated(let error):
            return Problem(
                .serviceUnavailable,
                type: .storeUnusable,
                title: "The store was migrated to another release",
                // The next release's version, or an earlier one's after a rollback: the hint names it.
                detail: "\(error.message); \(error.hint ?? "deploy the release that runs the store's version")"
            )
        case .starting:
            return Problem(
                .serviceUnavailable,
                type: .unavailable,
                title: "The service is starting",
                detail: "the store is being opened; retry in \(retryAfterSeconds) seconds",
                headers: headers
            )
        case .stopped, .ready:
            return Problem(
                .serviceUnavailable,
                type: .unavailable,
                title: "The service is shutting down",
                detail: "the store is closed",
                headers: headers
            )
        }
    }
}

extension MigrationProgress {
    /// "12 s elapsed, about 26 s left", for a problem's detail.
    var timesText: String {
        let elapsed = "\(elapsed.components.seconds) s elapsed"
        guard let left = estimatedTimeRemaining else { return elapsed + ", time left not yet known" }
        return elapsed + ", about \(left.components.seconds) s left"
    }
}
