import Persistence

/// Where the start-up migration is, as `/health`, the 503s and the status page show it.
///
/// ```json
/// {"step": 3, "stepCount": 4, "sourceVersion": "BookStore 3", "destinationVersion": "BookStore 4",
///  "stage": "create instances", "entityMapping": "PublicationToPublication",
///  "instancesDone": 2, "instancesTotal": 4, "percent": 56, "fractionCompleted": 0.5625}
/// ```
public struct MigrationStatus: Sendable, Hashable {
    public var step: Int
    public var stepCount: Int
    public var sourceVersion: String
    public var destinationVersion: String
    /// A stage of ``MigrationProgress/Stage``, or `starting` before the first report.
    public var stage: String
    public var entityMapping: String?
    public var instancesDone: Int
    public var instancesTotal: Int
    public var fractionCompleted: Double

    /// Before the first step reports: the plan's first step, nothing done.
    public init(plan: MigrationPlan) {
        step = 1
        stepCount = plan.steps.count
        sourceVersion = plan.steps.first?.source.name ?? plan.storeVersion.name
        destinationVersion = plan.steps.first?.destination.name ?? plan.targetVersion.name
        stage = "starting"
        entityMapping = nil
        instancesDone = 0
        instancesTotal = 0
        fractionCompleted = 0
    }

    public init(_ progress: MigrationProgress) {
        step = progress.step
        stepCount = progress.stepCount
        sourceVersion = progress.sourceVersion
        destinationVersion = progress.destinationVersion
        stage = progress.stage.rawValue
        entityMapping = progress.entityMapping
        instancesDone = progress.instancesDone
        instancesTotal = progress.instancesTotal
        fractionCompleted = progress.fractionCompleted
    }

    public var percent: Int { Int((fractionCompleted * 100).rounded(.down)) }

    /// The fields as JSON members.
    var members: [String: JSONValue] {
        [
            "step": .number(Double(step)), "stepCount": .number(Double(stepCount)),
            "sourceVersion": .string(sourceVersion), "destinationVersion": .string(destinationVersion),
            "stage": .string(stage), "entityMapping": entityMapping.map(JSONValue.string) ?? .null,
            "instancesDone": .number(Double(instancesDone)), "instancesTotal": .number(Double(instancesTotal)),
            "percent": .number(Double(percent)), "fractionCompleted": .number(fractionCompleted),
        ]
    }
}
