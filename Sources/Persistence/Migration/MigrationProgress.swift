/// Where a migration is: published as an `AsyncSequence` and logged.
///
/// ```swift
/// for await progress in migrator.progressUpdates() {
///     print("\(progress.step)/\(progress.stepCount) \(progress.stage) \(Int(progress.fractionCompleted * 100))%")
/// }
/// ```
public struct MigrationProgress: Sendable, Hashable, CustomStringConvertible {
    /// The stages of a step. In-place steps have one stage; the others have Core Data's three.
    public enum Stage: String, Sendable, Hashable, CaseIterable {
        case inPlace = "in place"
        case createInstances = "create instances"
        case createRelationships = "create relationships"
        case validateAndSave = "validate and save"
        case finished
    }

    /// The whole migration's fraction done, 0…1.
    public var fractionCompleted: Double
    /// The step's own fraction done, 0…1 (Core Data's `migrationProgress`).
    public var stepFractionCompleted: Double
    /// The step, counted from 1, and the number of steps.
    public var step: Int
    public var stepCount: Int
    public var sourceVersion: String
    public var destinationVersion: String
    public var stage: Stage
    /// The entity mapping being run, when the stage runs one.
    public var entityMapping: String?
    /// Instances of the entity mapping done so far in this stage, and how many there are.
    public var instancesDone: Int
    public var instancesTotal: Int

    public init(
        fractionCompleted: Double, stepFractionCompleted: Double, step: Int, stepCount: Int, sourceVersion: String,
        destinationVersion: String, stage: Stage, entityMapping: String? = nil, instancesDone: Int = 0, instancesTotal: Int = 0
    ) {
        self.fractionCompleted = fractionCompleted
        self.stepFractionCompleted = stepFractionCompleted
        self.step = step
        self.stepCount = stepCount
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.stage = stage
        self.entityMapping = entityMapping
        self.instancesDone = instancesDone
        self.instancesTotal = instancesTotal
    }

    public var description: String {
        var text = "step \(step)/\(stepCount) \(sourceVersion) → \(destinationVersion): \(stage.rawValue)"
        if let entityMapping { text += " \(entityMapping) \(instancesDone)/\(instancesTotal)" }
        return text + " (\(Int((fractionCompleted * 100).rounded(.down)))%)"
    }
}

extension MigrationProgress {
    /// A mapping model's progress as part of its step, which runs `passes` mapping models
    /// one after the other: each takes an equal share, and only the last one finishes the
    /// step (`nil` for the end of an earlier one), so the step's fraction never goes back.
    func pass(_ pass: Int, of passes: Int) -> MigrationProgress? {
        guard passes > 1 else { return self }
        if stage == .finished, pass < passes - 1 { return nil }
        var share = self
        share.stepFractionCompleted = (Double(pass) + stepFractionCompleted) / Double(passes)
        share.fractionCompleted = share.stepFractionCompleted
        return share
    }
}
