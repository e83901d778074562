import Synchronization

/// Hands progress reports to every current subscriber's `AsyncStream`.
final class ProgressBroadcast: Sendable {
    private let continuations = Mutex<[Int: AsyncStream<MigrationProgress>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func subscribe() -> AsyncStream<MigrationProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: MigrationProgress.self, bufferingPolicy: .bufferingNewest(256))
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ progress: MigrationProgress) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(progress) }
    }

    /// Ends every stream: the migration is over.
    func finish() {
        let all = continuations.withLock { state in
            defer { state = [:] }
            return Array(state.values)
        }
        for continuation in all { continuation.finish() }
    }
}
