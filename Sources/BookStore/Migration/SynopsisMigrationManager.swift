import Logging
import Persistence
import Synchronization

/// `BookStore 4` → `BookStore 5`: an inferred mapping run by a manager whose association
/// hook sets each publication's `synopsis` to its title, and which logs
/// `Migration progress of BookStore 4 → BookStore 5: N%` as the step advances, as the Core
/// Data book's manager does: the step's own fraction, which the progress bar of a chain
/// (the whole migration's) is not.
public class SynopsisMigrationManager: MigrationManager, @unchecked Sendable {
    // Unchecked for the same reason as its superclass: mutable state is behind a Mutex.
    private let lastPercent = Mutex(-1)

    /// Only publications get a synopsis; pages may be migrated as SQL.
    public override func needsAssociationCalls(for mapping: EntityMapping) -> Bool {
        mapping.destinationEntityName == "Publication"
    }

    /// The association hook reads the title and sets the synopsis, nothing else: the step
    /// makes the publications as SQL and passes only those values through Swift.
    public override func declaredAssociationValues(for mapping: EntityMapping) -> DeclaredValues? {
        mapping.destinationEntityName == "Publication" ? DeclaredValues(reads: ["title"], sets: ["synopsis"]) : nil
    }

    /// The hook reads the pair it is given, nothing stored: the step may be fused with the
    /// one before it.
    public override class var fetchesFromStores: Bool { false }

    /// Each pair gets its synopsis on its own, and the percentage logged only moves on: an
    /// interrupted step continues from its last batch.
    public override class var resumesAfterInterruption: Bool { true }

    /// Sets the new publication's `synopsis` to its title.
    public override func associate(sourceInstance: ManagedObject, withDestinationInstance destination: ManagedObject, for mapping: EntityMapping) {
        super.associate(sourceInstance: sourceInstance, withDestinationInstance: destination, for: mapping)
        if mapping.destinationEntityName == "Publication" {
            destination.setValue(sourceInstance.value(forKey: "title"), forKey: "synopsis")
        }
    }

    /// Logs the step's percentage each time it moves on by a whole point.
    public override func progressDidChange(_ progress: MigrationProgress) {
        super.progressDidChange(progress)
        let percent = Int((progress.stepFractionCompleted * 100).rounded(.down))
        let changed = lastPercent.withLock { last in
            defer { last = max(last, percent) }
            return percent > last
        }
        if changed { configuration.logger.info("Migration progress of \(progress.sourceVersion) → \(progress.destinationVersion): \(percent)%") }
    }
}
