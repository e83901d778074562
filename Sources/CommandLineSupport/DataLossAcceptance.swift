import Persistence

/// Runs a command's migration, saying a refusal to drop data in the command's terms: the
/// `--accept-data-loss` flag rather than the API's `acceptingDataLoss`.
///
/// ```swift
/// let plan = try await withDataLossFlagHint { try await migrator.migrateStore(at: url, to: target) }
/// ```
public func withDataLossFlagHint<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch var error as MigrationError where error.code == .dataLossNotAccepted {
        error.hint =
            "run it again with --accept-data-loss to accept the loss, or give a mapping model back that carries it; the store was not changed"
        throw error
    }
}
