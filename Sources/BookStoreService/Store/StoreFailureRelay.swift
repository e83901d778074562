import Synchronization

/// How the store service ends the service when the store cannot be served after the server
/// started listening (a migration that fails on a full disk, say): the service group shuts
/// down gracefully — the server stops accepting, finishes what it has and logs no
/// cancellation — and the error is kept for ``BookStoreService/run()`` to throw once the
/// group is down.
///
/// ```swift
/// relay.install { await group.triggerGracefulShutdown() }
/// try await group.run()
/// if let error = relay.error { throw error }
/// ```
final class StoreFailureRelay: Sendable {
    private struct State {
        var error: (any Error)?
        var shutdown: (@Sendable () async -> Void)?
    }

    private let state = Mutex(State())

    /// What starts the graceful shutdown of the group the store service runs in.
    func install(_ shutdown: @escaping @Sendable () async -> Void) {
        state.withLock { $0.shutdown = shutdown }
    }

    /// The store's error, once the store service failed.
    var error: (any Error)? { state.withLock { $0.error } }

    /// Keeps `error` and starts the graceful shutdown; `false` when no shutdown was installed
    /// (the application runs in a group of someone else's), and the caller throws instead.
    func fail(with error: any Error) async -> Bool {
        let shutdown = state.withLock { state -> (@Sendable () async -> Void)? in
            state.error = error
            return state.shutdown
        }
        guard let shutdown else { return false }
        await shutdown()
        return true
    }
}
