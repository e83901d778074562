import Synchronization

/// Paces a migration's writes to at most ``rowsPerSecond`` on average, so that a migration
/// running beside a store's users (an online migration on the primary) leaves the server
/// room: each batch written is followed by a pause until the rows written so far are due.
///
/// ```swift
/// let throttle = MigrationThrottle(rowsPerSecond: 20_000)
/// try await throttle.pace(rows: batch.count)   // after each batch's commit
/// ```
final class MigrationThrottle: Sendable {
    let rowsPerSecond: Int
    private let written = Mutex<(started: ContinuousClock.Instant?, rows: Int)>((nil, 0))

    init(rowsPerSecond: Int) {
        self.rowsPerSecond = max(rowsPerSecond, 1)
    }

    /// Counts `rows` written, then waits until they are due at the rate.
    func pace(rows: Int) async throws {
        let due = written.withLock { written in
            let started = written.started ?? .now
            written.started = started
            written.rows += max(rows, 0)
            return started + .seconds(Double(written.rows) / Double(rowsPerSecond))
        }
        if due > .now { try await Task.sleep(until: due) }
    }
}
