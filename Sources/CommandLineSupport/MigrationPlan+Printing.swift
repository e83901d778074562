import Foundation
import Persistence

extension MigrationPlan {
    /// Prints where the store is, its version, the target and each step, as `migrate`
    /// shows them before running (and `--plan` alone).
    ///
    /// ```
    /// Store:                sqlite://./bookstore.sqlite
    /// Store model version:  BookStore 3
    /// Target model version: BookStore 5
    /// Steps:
    ///   1. BookStore 3 → BookStore 4 (streamed: mapping Model3To4, policy PublicationToPublicationMigrationPolicy)
    ///      streamed, because PublicationToPublication runs a policy
    ///      PublicationToPublication: instances one by one, because the policy … overrides createDestinationInstances; relationships as SQL
    ///      PageToPage: instances as SQL; relationships as SQL
    ///      note: Publication.author is not carried: no property mapping of PublicationToPublication reads it (unless its policy … carries it) — 3 rows have a value
    /// ```
    ///
    /// Counted warnings (``countingAffectedRows(in:logger:)``) give the rows concerned.
    public func printSummary(of url: StoreURL) {
        print("Store:                \(url)")
        print("Store model version:  \(storeVersion.name)")
        print("Target model version: \(targetVersion.name)")
        if isEmpty {
            print("The store is at \(targetVersion.name); nothing to do.")
            return
        }
        print("Route:                \(route)")
        if goesBack {
            let dropsData = steps.contains { $0.dataLossWarnings.contains(where: \.dropsForCertain) }
            print(
                "Direction:            back, to an older version\(dropsData ? "; what the warnings below drop is lost, so it runs only when that is accepted (--accept-data-loss)" : "")"
            )
        }
        print("Steps:")
        for (index, step) in steps.enumerated() {
            print("  \(index + 1). \(step)")
            step.printDetails(indent: "     ")
        }
    }

    /// Prints what a finished run did: the migration and its time, or that another
    /// process had done it meanwhile.
    public func printOutcome(of url: StoreURL, since started: ContinuousClock.Instant) {
        if isEmpty {
            print("Another process migrated the store to \(storeVersion.name) meanwhile; nothing to do.")
            return
        }
        let elapsed = ContinuousClock.now - started
        print(
            "Migrated \(url) from \(storeVersion.name) to \(targetVersion.name) in \(steps.count) step\(steps.count == 1 ? "" : "s") (\(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))))."
        )
    }
}

extension MigrationPlan.Step {
    /// Why the step streams (or, in place, that it leaves the renumbering to the next), how each entity mapping runs, what the step drops (a
    /// `warning` for data certainly lost or refused, a `note` where a policy may carry it),
    /// and, for a streamed step, whether it runs in one pass with the next one and what
    /// the next run does with it after a kill.
    public func printDetails(indent: String) {
        if let reason = streamingReason { print("\(indent)streamed, because \(reason)") }
        if keepsEntityNumbers { print("\(indent)entities keep their numbers: the streamed step after it writes every row anew") }
        for mapping in entityMappingPlans { print("\(indent)\(mapping)") }
        for warning in dataLossWarnings { print("\(indent)\(warning.isCertain ? "warning" : "note"): \(warning)") }
        // Said of streamed steps only: no other kind is ever fused, and saying so under
        // each of them is noise.
        if strategy == .streamed, let fusionWithNext { print("\(indent)\(fusionWithNext)") }
        if let resumption { print("\(indent)\(resumption)") }
    }
}
