/// Where a migration is: published as an `AsyncSequence` and logged.
///
/// ```swift
/// for await progress in migrator.progressUpdates() {
///     print("\(progress.step)/\(progress.stepCount) \(progress.stage) \(Int(progress.fractionCompleted * 100))%")
/// }
/// ```
public struct MigrationProgress: Sendable, Hashable, CustomStringConvertible {
    /// The stages of a step. In-place steps have one stage; the others have Core Data's three.
    public enum Stage: String, Sendable, Hashable, CaseIterable, Codable {
        /// Planned, nothing reported yet (``MigrationProgress/init(startOf:)``).
        case starting
        /// An in-place step's one stage: its SQL runs inside the store.
        case inPlace = "in place"
        /// Stage 1: destination instances are created from the source instances.
        case createInstances = "create instances"
        /// Stage 2: the destination instances' relationships are set.
        case createRelationships = "create relationships"
        /// Stage 3: the destination store is validated and saved.
        case validateAndSave = "validate and save"
        /// The step is done (for the last step, the migration).
        case finished
    }

    /// What a report's rows are of.
    public enum Subject: Sendable, Hashable, CustomStringConvertible {
        /// An entity mapping of the step's mapping model: stages 1 and 2 (and a set-based
        /// step's inserts) run mapping by mapping.
        case entityMapping(String)
        /// An entity of the destination model: stage 3 validates entity by entity.
        case entity(String)

        /// `entity mapping <name>` or `entity <name>`, as progress lines show it.
        public var description: String {
            switch self {
            case .entityMapping(let name): "entity mapping \(name)"
            case .entity(let name): "entity \(name)"
            }
        }
    }

    /// The whole migration's fraction done, 0…1. From a ``ProgressiveMigrator``, each step
    /// weighs the rows it reads times the passes it makes over them (an in-place step one, a
    /// set-based step two, a streamed step three); from a ``MigrationManager`` on its own, it
    /// is the step's fraction, each of its three stages a third.
    public var fractionCompleted: Double
    /// The step's own fraction done, 0…1 (Core Data's `migrationProgress`).
    public var stepFractionCompleted: Double
    /// The step, counted from 1, and the number of steps.
    public var step: Int
    /// The number of steps in the plan (at least 1).
    public var stepCount: Int
    /// The name of the model version the step migrates from.
    public var sourceVersion: String
    /// The name of the model version the step migrates to.
    public var destinationVersion: String
    /// The stage the step is at.
    public var stage: Stage
    /// The entity mapping or entity the stage is at, when it runs one at a time.
    public var subject: Subject?
    /// Instances of the ``subject`` done so far in this stage, and how many it has.
    public var instancesDone: Int
    /// The instances the ``subject`` has in this stage; 0 when the stage runs no subject.
    public var instancesTotal: Int
    /// Time since the migration started (set by a ``ProgressiveMigrator``; zero from a
    /// ``MigrationManager`` on its own).
    public var elapsed: Duration
    /// The time the rest should take at the current step's rate; `nil` before there is a
    /// rate to go by (and from a ``MigrationManager`` on its own).
    public var estimatedTimeRemaining: Duration?

    /// The entity mapping being run, when the stage runs one (Core Data's `currentEntityMapping`).
    public var entityMapping: String? {
        if case .entityMapping(let name) = subject { name } else { nil }
    }

    /// A report with every field given; a ``ProgressiveMigrator`` or ``MigrationManager`` makes these, a test or client may too.
    public init(
        fractionCompleted: Double,
        stepFractionCompleted: Double,
        step: Int,
        stepCount: Int,
        sourceVersion: String,
        destinationVersion: String,
        stage: Stage,
        subject: Subject? = nil,
        instancesDone: Int = 0,
        instancesTotal: Int = 0,
        elapsed: Duration = .zero,
        estimatedTimeRemaining: Duration? = nil
    ) {
        self.fractionCompleted = fractionCompleted
        self.stepFractionCompleted = stepFractionCompleted
        self.step = step
        self.stepCount = stepCount
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.stage = stage
        self.subject = subject
        self.instancesDone = instancesDone
        self.instancesTotal = instancesTotal
        self.elapsed = elapsed
        self.estimatedTimeRemaining = estimatedTimeRemaining
    }

    /// A migration about to run `plan`: its first step, nothing done, no time spent.
    public init(startOf plan: MigrationPlan) {
        self.init(
            fractionCompleted: 0,
            stepFractionCompleted: 0,
            step: 1,
            stepCount: max(plan.steps.count, 1),
            sourceVersion: plan.steps.first?.source.name ?? plan.storeVersion.name,
            destinationVersion: plan.steps.first?.destination.name ?? plan.targetVersion.name,
            stage: .starting
        )
    }

    /// The whole migration's percentage done, rounded down: 99 until it is finished.
    public var percent: Int { Int((fractionCompleted * 100).rounded(.down)) }

    /// The report as it stands `time` after it was made: that much more time spent, and that
    /// much less left (never below zero: a stage that runs late shows nothing left until the
    /// next report says more).
    public func movedOn(by time: Duration) -> MigrationProgress {
        let time = max(.zero, time)
        var later = self
        later.elapsed = elapsed + time
        later.estimatedTimeRemaining = estimatedTimeRemaining.map { max(.zero, $0 - time) }
        return later
    }

    /// One line: `step 1/2 BookStore 3 → BookStore 4: create instances entity mapping PublicationToPublication 2000/4000 (31%)`.
    public var description: String {
        var text = "step \(step)/\(stepCount) \(sourceVersion) → \(destinationVersion): \(stage.rawValue)"
        if let subject { text += " \(subject) \(instancesDone)/\(instancesTotal)" }
        return text + " (\(percent)%)"
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
