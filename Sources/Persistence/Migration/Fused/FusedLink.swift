import Synchronization

/// The hand-over between two fused steps' migration managers, which run side by side:
/// the upstream step says where its carried objects' keys lie once its own SQL is done
/// (``announce(_:)``), then hands each batch of carried objects over (``send(_:mapping:)``),
/// one batch at a time, so memory holds at most three batches of them (one being
/// migrated downstream, one waiting, one being handed over); the downstream step waits for
/// the first (``ready()``) and takes the batches (``next(mapping:)``).
///
/// Either side failing or finishing closes the link (``close(_:)``): what was handed over
/// can still be taken, and any wait for more throws ``Closed`` rather than hang.
final class FusedLink: Sendable {
    /// Where the carried objects of each upstream entity mapping have their keys: the
    /// intermediate version's rows, which the downstream step never finds stored.
    struct Ready: Sendable {
        struct Keys: Sendable {
            /// The largest key any of them may have (the upstream identity range's end).
            let largest: Int64
            /// How many source rows they come from.
            let rows: Int
        }

        let keys: [String: Keys]
    }

    /// What a wait throws once the other side closed the link; the error that closed it
    /// is what the fused run reports.
    struct Closed: Error {
        let cause: any Error
    }

    private enum Item {
        case batch(mapping: String, objects: [ManagedObject])
        case end(mapping: String)
    }

    private struct State {
        var ready: Ready?
        var queue: [Item] = []
        var failure: (any Error)?
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// The carried mappings, in the order they are handed over.
    let carried: [MigrationPlan.CarriedMapping]
    private let state = Mutex(State())

    init(carried: [MigrationPlan.CarriedMapping]) {
        self.carried = carried
    }

    /// The upstream mapping whose objects `downstream` takes, if it takes any.
    func upstream(of downstream: String) -> String? {
        carried.first { $0.downstream == downstream }?.upstream
    }

    /// Whether the upstream step hands `mapping`'s objects over.
    func hands(_ mapping: String) -> Bool {
        carried.contains { $0.upstream == mapping }
    }

    func announce(_ ready: Ready) {
        change { $0.ready = ready }
    }

    /// Whether ``announce(_:)`` was called.
    var isAnnounced: Bool {
        state.withLock { $0.ready != nil }
    }

    func ready() async throws -> Ready {
        try await wait { $0.ready }
    }

    /// Once the upstream step announced them (``ready()``): where the carried objects have
    /// their keys, by the downstream entity mapping that takes them.
    func readyKeysByDownstreamMapping() async throws -> [String: Ready.Keys] {
        let ready = try await ready()
        var keys: [String: Ready.Keys] = [:]
        for downstream in Set(carried.map(\.downstream)) {
            if let upstream = upstream(of: downstream), let mappingKeys = ready.keys[upstream] { keys[downstream] = mappingKeys }
        }
        return keys
    }

    /// Hands a batch over once the previous one was taken.
    func send(_ objects: [ManagedObject], mapping: String) async throws {
        try await wait { $0.queue.isEmpty ? () : nil }
        change { $0.queue.append(.batch(mapping: mapping, objects: objects)) }
    }

    /// Says that `mapping` has no more objects.
    func end(mapping: String) {
        change { $0.queue.append(.end(mapping: mapping)) }
    }

    /// The next batch of the upstream `mapping`, `nil` after its last one.
    func next(mapping: String) async throws -> [ManagedObject]? {
        let item = try await wait { state -> Item? in
            guard let first = state.queue.first else { return nil }
            state.queue.removeFirst()
            return first
        }
        // Taken: the upstream step may hand the next one over.
        change { _ in }
        switch item {
        case .batch(let name, let objects) where name == mapping: return objects
        case .end(let name) where name == mapping: return nil
        case .batch(let name, _), .end(let name):
            let error = MigrationError(
                .store,
                "fused steps handed \(name)'s objects over where \(mapping)'s were expected",
                hint: "the store was not changed; report this with the output of `migrate --plan`"
            )
            close(error)
            throw error
        }
    }

    /// Closes the link: every wait, now and later, for what is not there throws ``Closed``
    /// with `error` (the first one given).
    func close(_ error: any Error) {
        change { if $0.failure == nil { $0.failure = error } }
    }

    /// Waits until `take` returns a value (it may change the state as it takes it), or the
    /// link is closed; a cancelled task closes it, so the other side stops too.
    private func wait<T>(_ take: (inout State) -> T?) async throws -> T {
        while true {
            var result: Result<T, any Error>?
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Looked at and, if nothing is there yet, registered under one lock: a
                    // change cannot slip in between.
                    let registered = state.withLock { state -> Bool in
                        if let value = take(&state) {
                            result = .success(value)
                            return false
                        }
                        if let failure = state.failure {
                            result = .failure(Closed(cause: failure))
                            return false
                        }
                        state.nextWaiter += 1
                        state.waiters[state.nextWaiter] = continuation
                        return true
                    }
                    if !registered { continuation.resume() }
                }
            } onCancel: {
                self.close(CancellationError())
            }
            if let result { return try result.get() }
        }
    }

    /// Changes the state and wakes every waiter to look again.
    private func change(_ body: (inout State) -> Void) {
        let waiters = state.withLock { state in
            body(&state)
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }
}
