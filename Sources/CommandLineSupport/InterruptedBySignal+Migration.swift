import ArgumentParser
import Foundation
import Persistence
import UnixSignals

extension InterruptedBySignal {
    /// What a migrate command says when a signal stopped it: the signal, that the migration
    /// is being cancelled and what a second signal does, on standard error.
    ///
    /// ```
    /// SIGTERM received: cancelling the migration and removing its work (a second signal stops at once; the store stays whole)
    /// ```
    public static func announceMigrationCancel(_ signal: UnixSignal) {
        FileHandle.standardError.write(
            Data("\n\(signal) received: cancelling the migration and removing its work (a second signal stops at once; the store stays whole)\n".utf8)
        )
    }

    /// Reports a migration a signal stopped, with `standing` (the store's plan planned again
    /// afterwards, `nil` when it could not be read) saying where the store is now, and
    /// returns the exit code to end with.
    ///
    /// ```
    /// error: sqlite://./bookstore.sqlite: the migration was cancelled. The store was not changed; run the migration again
    /// The store is at model version BookStore 3; 2 steps remain to BookStore 5.
    /// ```
    public func reportMigration(standing: MigrationPlan?) -> ExitCode {
        FileHandle.standardError.write(Data("error: \(self)\n".utf8))
        if let standing {
            let remaining =
                standing.isEmpty
                ? "the migration had completed"
                : "\(standing.steps.count) step\(standing.steps.count == 1 ? "" : "s") remain\(standing.steps.count == 1 ? "s" : "") to \(standing.targetVersion.name)"
            print("The store is at model version \(standing.storeVersion.name); \(remaining).")
        }
        return exitCode
    }
}

/// Runs a migration that SIGINT or SIGTERM cancel (``cancellingOnSignals(announce:_:)``): a
/// signal is announced, and once the migration has cleaned up, the error and where the store
/// stands (`standing`, the store's plan read again) are reported and the command ends with
/// 130 or 143.
///
/// ```swift
/// let ran = try await migratingUntilSignalled(standing: { try? await migrator.plan(forStoreAt: url) }) {
///     try await migrator.migrateStore(at: url)
/// }
/// ```
public func migratingUntilSignalled(
    standing: () async -> MigrationPlan?,
    _ migrate: @escaping @Sendable () async throws -> MigrationPlan
) async throws -> MigrationPlan {
    do {
        return try await cancellingOnSignals(announce: InterruptedBySignal.announceMigrationCancel, migrate)
    } catch let stopped as InterruptedBySignal {
        throw stopped.reportMigration(standing: await standing())
    }
}
