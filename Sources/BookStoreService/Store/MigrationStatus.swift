import Persistence

/// Where the start-up migration is, as `/health`, the 503s and the status page show it.
///
/// ```json
/// {"step": 3, "stepCount": 4, "sourceVersion": "BookStore 3", "destinationVersion": "BookStore 4",
///  "stage": "create instances", "entityMapping": "PublicationToPublication", "entity": null,
///  "instancesDone": 2000, "instancesTotal": 4000, "percent": 31, "fractionCompleted": 0.3125,
///  "elapsedSeconds": 12, "estimatedSecondsRemaining": 26}
/// ```
///
/// `fractionCompleted` weighs each step by the rows it reads and the passes it makes over
/// them (see ``MigrationProgress/fractionCompleted``); the rows are those of the entity
/// mapping (stages 1 and 2) or the entity (stage 3, validation) named.
public struct MigrationStatus: Sendable, Hashable {
    public var step: Int
    public var stepCount: Int
    public var sourceVersion: String
    public var destinationVersion: String
    /// A stage of ``MigrationProgress/Stage``, or `starting` before the first report.
    public var stage: String
    public var subject: MigrationProgress.Subject?
    public var instancesDone: Int
    public var instancesTotal: Int
    public var fractionCompleted: Double
    /// When the service began the migration (planned it): the elapsed time counts from here,
    /// on the service's clock, so that it never goes back from one report to the next.
    public var startedAt: ContinuousClock.Instant
    /// The time the rest should take, as estimated when this was reported; `nil` until
    /// there is a rate to go by.
    public var estimatedTimeRemaining: Duration?
    /// When this was reported: the times shown move on from there between reports.
    public var reportedAt: ContinuousClock.Instant

    /// Before the first step reports: the plan's first step, nothing done.
    public init(plan: MigrationPlan, now: ContinuousClock.Instant = .now) {
        step = 1
        stepCount = plan.steps.count
        sourceVersion = plan.steps.first?.source.name ?? plan.storeVersion.name
        destinationVersion = plan.steps.first?.destination.name ?? plan.targetVersion.name
        stage = "starting"
        subject = nil
        instancesDone = 0
        instancesTotal = 0
        fractionCompleted = 0
        startedAt = now
        estimatedTimeRemaining = nil
        reportedAt = now
    }

    /// A report of a migration that began at `startedAt` (the first status's).
    public init(_ progress: MigrationProgress, startedAt: ContinuousClock.Instant, now: ContinuousClock.Instant = .now) {
        step = progress.step
        stepCount = progress.stepCount
        sourceVersion = progress.sourceVersion
        destinationVersion = progress.destinationVersion
        stage = progress.stage.rawValue
        subject = progress.subject
        instancesDone = progress.instancesDone
        instancesTotal = progress.instancesTotal
        fractionCompleted = progress.fractionCompleted
        self.startedAt = startedAt
        estimatedTimeRemaining = progress.estimatedTimeRemaining
        reportedAt = now
    }

    public var percent: Int { Int((fractionCompleted * 100).rounded(.down)) }

    /// Time since the migration started, at `now`.
    public func elapsed(at now: ContinuousClock.Instant) -> Duration {
        max(.zero, now - startedAt)
    }

    /// The time left at `now`: the estimate, less the time since it was made (never below
    /// zero: a stage that runs late shows 0 until the next report says more).
    public func estimatedTimeRemaining(at now: ContinuousClock.Instant) -> Duration? {
        estimatedTimeRemaining.map { max(.zero, $0 - max(.zero, now - reportedAt)) }
    }

    /// "12 s elapsed, about 26 s left" as of `now`, for a problem's detail.
    func timesText(at now: ContinuousClock.Instant = .now) -> String {
        let elapsed = "\(elapsed(at: now).components.seconds) s elapsed"
        guard let left = estimatedTimeRemaining(at: now) else { return elapsed + ", time left not yet known" }
        return elapsed + ", about \(left.components.seconds) s left"
    }

    /// The fields as JSON members, the times as of `now`.
    func members(at now: ContinuousClock.Instant = .now) -> [String: JSONValue] {
        func name(_ subject: MigrationProgress.Subject?) -> (entityMapping: JSONValue, entity: JSONValue) {
            switch subject {
            case .entityMapping(let name)?: (.string(name), .null)
            case .entity(let name)?: (.null, .string(name))
            case nil: (.null, .null)
            }
        }
        func seconds(_ duration: Duration) -> JSONValue { .number(Double(duration.components.seconds)) }
        let (entityMapping, entity) = name(subject)
        return [
            "step": .number(Double(step)), "stepCount": .number(Double(stepCount)),
            "sourceVersion": .string(sourceVersion), "destinationVersion": .string(destinationVersion),
            "stage": .string(stage), "entityMapping": entityMapping, "entity": entity,
            "instancesDone": .number(Double(instancesDone)), "instancesTotal": .number(Double(instancesTotal)),
            "percent": .number(Double(percent)), "fractionCompleted": .number(fractionCompleted),
            "elapsedSeconds": seconds(elapsed(at: now)),
            "estimatedSecondsRemaining": estimatedTimeRemaining(at: now).map(seconds) ?? .null,
        ]
    }
}
