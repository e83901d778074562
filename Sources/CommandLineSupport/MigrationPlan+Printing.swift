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
    /// ```
    public func printSummary(of url: StoreURL) {
        print("Store:                \(url)")
        print("Store model version:  \(storeVersion.name)")
        print("Target model version: \(targetVersion.name)")
        if isEmpty {
            print("The store is at \(targetVersion.name); nothing to do.")
            return
        }
        print("Steps:")
        for (index, step) in steps.enumerated() {
            print("  \(index + 1). \(step)")
            if let reason = step.streamingReason { print("     streamed, because \(reason)") }
            for mapping in step.entityMappingPlans { print("     \(mapping)") }
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
        print("Migrated \(url) from \(storeVersion.name) to \(targetVersion.name) in \(steps.count) step\(steps.count == 1 ? "" : "s") (\(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))).")
    }
}
