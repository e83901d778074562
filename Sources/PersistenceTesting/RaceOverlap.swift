import Synchronization
import Testing

/// Whether the sides of a race were in their racing part at the same time. Each side runs
/// that part (a save, a read-modify-save) through ``inside(_:)``; ``overlapped`` says whether
/// two ever were inside at once. A race test that never overlapped proved nothing about the
/// race, however its expectations came out: ``raceUntilOverlapping(_:rounds:sourceLocation:_:)``
/// runs it again.
///
/// ```swift
/// try await raceUntilOverlapping("two saves") { _, overlap in
///     async let a = overlap.inside { try await first.save() }
///     async let b = overlap.inside { try await second.save() }
///     _ = try await (a, b)
/// }
/// ```
public final class RaceOverlap: Sendable {
    private let state = Mutex<(inside: Int, most: Int)>((inside: 0, most: 0))

    /// A record of a race not yet run: nobody inside.
    public init() {}

    /// Runs `body` as a side's racing part.
    public func inside<T>(_ body: () async throws -> T) async rethrows -> T {
        state.withLock { state in
            state.inside += 1
            state.most = max(state.most, state.inside)
        }
        defer { state.withLock { $0.inside -= 1 } }
        return try await body()
    }

    /// The most sides that were inside at once.
    public var most: Int { state.withLock { $0.most } }

    /// Whether two sides were ever inside at once.
    public var overlapped: Bool { most >= 2 }
}

/// Runs `round` (a whole race, with a fresh ``RaceOverlap``; its number from 1) until its
/// sides overlapped, at most `rounds` times, and records an issue naming `what` when they
/// never did. Returns how many rounds ran.
@discardableResult
public func raceUntilOverlapping(
    _ what: String,
    rounds: Int = 10,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ round: (_ number: Int, _ overlap: RaceOverlap) async throws -> Void
) async throws -> Int {
    for number in 1...rounds {
        let overlap = RaceOverlap()
        try await round(number, overlap)
        if overlap.overlapped { return number }
    }
    Issue.record("\(what) never overlapped in \(rounds) rounds: the race was not run", sourceLocation: sourceLocation)
    return rounds
}
