import Synchronization

/// Where a mapping's instance stage spends its time, summed over its batches, so that its
/// log line says which part is slow:
///
/// - `read`: reading a batch of source instances, or waiting for the step before in a fused
///   pass to hand one over;
/// - `hooks`: the Swift of the policy's and the manager's hooks over the batch — objects
///   made, values read and set, associations;
/// - `prepare`: working out the batch's keys, association rows and checkpoint;
/// - `write`: the batch's save — its plan, its statements and its commit.
///
/// In a pipelined stage a batch is written while the next one is read and made, so the
/// parts may add up to more than the stage's time; elsewhere they add up to at most the
/// stage's time, the rest being what is not timed (a fused pass handing its objects to the
/// next step, the stage's start and end). A mapping copied in SQL reports only its closing
/// save. Timed per batch, never per object.
final class StagePartClock: Sendable {
    enum Part: Sendable {
        case read, hooks, prepare, write
    }

    struct Times: Sendable, Equatable {
        var read: Duration = .zero
        var hooks: Duration = .zero
        var prepare: Duration = .zero
        var write: Duration = .zero
    }

    private let times = Mutex(Times())

    /// Runs `body`, adding its time to `part`.
    func time<T>(_ part: Part, _ body: () async throws -> T) async rethrows -> T {
        let start = ContinuousClock.now
        defer { add(ContinuousClock.now - start, to: part) }
        return try await body()
    }

    /// The times so far, set back to zero for the next stage.
    func take() -> Times {
        times.withLock { times in
            defer { times = Times() }
            return times
        }
    }

    private func add(_ duration: Duration, to part: Part) {
        times.withLock { times in
            switch part {
            case .read: times.read += duration
            case .hooks: times.hooks += duration
            case .prepare: times.prepare += duration
            case .write: times.write += duration
            }
        }
    }
}
