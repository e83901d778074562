import Synchronization

/// Up to `capacity` reader lanes, opened when first needed and lent out one caller at a
/// time: a read waits for a free lane rather than queueing behind a busy one.
final class PostgresLanePool: Sendable {
    private struct State {
        var idle: [PostgresLane] = []
        var all: [PostgresLane] = []
        /// Lanes open or being opened.
        var opened = 0
        var waiters: [CheckedContinuation<Grant, any Error>] = []
        var isClosed = false
    }

    private enum Grant {
        case lane(PostgresLane)
        /// Room for one more: the caller opens it.
        case open
    }

    let capacity: Int
    private let state = Mutex(State())
    private let makeLane: @Sendable (Int) async throws -> PostgresLane

    init(capacity: Int, makeLane: @escaping @Sendable (Int) async throws -> PostgresLane) {
        self.capacity = capacity
        self.makeLane = makeLane
    }

    /// Runs `body` with a lane of its own, returned to the pool afterwards.
    func withLane<T: Sendable>(_ body: (PostgresLane) async throws -> T) async throws -> T {
        let lane = try await acquire()
        defer { release(lane) }
        return try await body(lane)
    }

    private func acquire() async throws -> PostgresLane {
        let grant = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
            state.withLock { state in
                if state.isClosed {
                    continuation.resume(throwing: Self.closedError)
                } else if let lane = state.idle.popLast() {
                    continuation.resume(returning: .lane(lane))
                } else if state.opened < capacity {
                    state.opened += 1
                    continuation.resume(returning: .open)
                } else {
                    state.waiters.append(continuation)
                }
            }
        }
        switch grant {
        case .lane(let lane):
            return lane
        case .open:
            let index = state.withLock { $0.all.count }
            do {
                let lane = try await makeLane(index)
                let closedMeanwhile = state.withLock { state in
                    state.all.append(lane)
                    return state.isClosed
                }
                if closedMeanwhile {
                    await lane.close()
                    throw Self.closedError
                }
                return lane
            } catch {
                // Give the slot back; a waiter, if any, tries opening it.
                let waiter = state.withLock { state -> CheckedContinuation<Grant, any Error>? in
                    guard !state.waiters.isEmpty else {
                        state.opened -= 1
                        return nil
                    }
                    return state.waiters.removeFirst()
                }
                waiter?.resume(returning: .open)
                throw error
            }
        }
    }

    private func release(_ lane: PostgresLane) {
        let waiter = state.withLock { state -> CheckedContinuation<Grant, any Error>? in
            guard !state.waiters.isEmpty else {
                state.idle.append(lane)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: .lane(lane))
    }

    /// The lanes open, those lent out, and the callers waiting for one.
    var counts: ConnectionUsage.Counts {
        state.withLock { state in
            ConnectionUsage.Counts(open: state.all.count, inUse: state.all.count - state.idle.count, waiting: state.waiters.count)
        }
    }

    /// Closes every lane (each after the work queued on it); later calls fail.
    func close() async {
        let (lanes, waiters) = state.withLock { state in
            state.isClosed = true
            defer {
                state.waiters.removeAll()
                state.idle.removeAll()
                state.all.removeAll()
            }
            return (state.all, state.waiters)
        }
        for waiter in waiters { waiter.resume(throwing: Self.closedError) }
        for lane in lanes { await lane.close() }
    }

    static let closedError = DatabaseError(resultCode: 0, message: "the database is closed")
}
