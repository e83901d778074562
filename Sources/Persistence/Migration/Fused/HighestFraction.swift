import Synchronization

/// The whole migration's largest fraction reported by a fused pass's steps.
final class HighestFraction: Sendable {
    private let value = Mutex(0.0)

    /// Raises the mark to `fraction`; whether it rose.
    func raise(to fraction: Double) -> Bool {
        value.withLock { highest in
            guard fraction >= highest else { return false }
            highest = fraction
            return true
        }
    }
}
