import Synchronization

/// What a fused pass's steps report, passed on as the reports of one migration whose steps
/// run in turn.
///
/// The steps run side by side, each in its own task: a downstream step reports its work on
/// the first batches before its upstream step has reported its end, and may even finish
/// first. Its reports wait until every step before it in the pass has reported its end, and
/// are then passed on in their order. So the last report of a step is its end, where the next
/// begins, and the whole never moves back, however the tasks are scheduled.
final class FusedProgress: Sendable {
    typealias Delivery = @Sendable () -> Void

    private struct State {
        /// How many steps from the start of the pass reported their end.
        var ended = 0
        var highest = 0.0
        /// The reports of steps beyond the first that has not ended, by position.
        var waiting: [Int: [(fraction: Double, isEnd: Bool, deliver: Delivery)]] = [:]

        mutating func pass(_ fraction: Double, isEnd: Bool, _ deliver: Delivery) {
            if fraction >= highest {
                highest = fraction
                deliver()
            }
            guard isEnd else { return }
            ended += 1
            for report in waiting.removeValue(forKey: ended) ?? [] { pass(report.fraction, isEnd: report.isEnd, report.deliver) }
        }
    }

    private let state = Mutex(State())

    /// Passes on (by `deliver`, called under the lock, so reports keep their order) the report
    /// of the step at `position` in the pass, which puts the whole at `fraction`, now or once
    /// the steps before it ended; `isEnd` says it is the step's last.
    func report(position: Int, fraction: Double, isEnd: Bool, deliver: @escaping Delivery) {
        state.withLock { state in
            if position == state.ended {
                state.pass(fraction, isEnd: isEnd, deliver)
            } else {
                state.waiting[position, default: []].append((fraction, isEnd, deliver))
            }
        }
    }
}
