import Synchronization
import Testing

@testable import Persistence

/// A fused pass's steps report from tasks of their own; the whole is reported as if they
/// ran in turn. Found by a run where the downstream step reported its first batch before
/// the upstream one reported its end, which was then dropped: the upstream step's last
/// report was from the middle of it.
@Suite struct FusedProgressTests {
    /// Steps 3 and 4 of four equal steps: step 3 spans 0.5…0.75, step 4 0.75…1.
    private static func fraction(position: Int, step: Double) -> Double { 0.5 + 0.25 * (Double(position) + step) }

    /// A fused progress, a function reporting a step's own fraction to it, and what it passed on.
    private static func reporter() -> (report: (Int, Double) -> Void, delivered: Deliveries) {
        let progress = FusedProgress()
        let delivered = Deliveries()
        let report = { (position: Int, step: Double) in
            let fraction = fraction(position: position, step: step)
            progress.report(position: position, fraction: fraction, isEnd: step == 1) { delivered.append(position, fraction) }
        }
        return (report, delivered)
    }

    @Test func aDownstreamStepIsReportedOnceTheStepBeforeItEnded() {
        let (report, delivered) = Self.reporter()
        report(0, 0.3)
        report(1, 0.2)  // the downstream step's first batch, before the upstream's end
        report(0, 0.9)
        report(0, 1)
        report(1, 0.6)
        report(1, 1)
        let all = delivered.all
        #expect(all.map(\.position) == [0, 0, 0, 1, 1, 1])
        #expect(all.last { $0.position == 0 }?.fraction == 0.75)
        #expect(all.last?.fraction == 1)
    }

    /// A downstream step that finished before the step before it ended is reported, whole,
    /// after it.
    @Test func aDownstreamStepThatFinishedFirstIsReportedAfterTheStepBeforeIt() {
        let (report, delivered) = Self.reporter()
        report(0, 0.5)
        report(1, 0.5)
        report(1, 1)
        report(0, 1)
        #expect(delivered.all.map(\.position) == [0, 0, 1, 1])
        #expect(delivered.all.map(\.fraction) == [0.625, 0.75, 0.875, 1])
    }

    /// However the two tasks interleave, the reports passed on move forward and each step's
    /// last is its end.
    @Test(arguments: 0..<20)
    func reportsFromTwoTasksKeepTheirOrder(round: Int) async {
        let progress = FusedProgress()
        let delivered = Deliveries()
        await withTaskGroup(of: Void.self) { tasks in
            for position in 0..<2 {
                tasks.addTask {
                    for batch in 1...200 {
                        let step = Double(batch) / 200
                        let fraction = Self.fraction(position: position, step: step)
                        progress.report(position: position, fraction: fraction, isEnd: batch == 200) {
                            delivered.append(position, fraction)
                        }
                        if batch % 16 == 0 { await Task.yield() }
                    }
                }
            }
        }
        let all = delivered.all
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.fraction <= $1.fraction && $0.position <= $1.position })
        #expect(all.last { $0.position == 0 }?.fraction == 0.75)
        #expect(all.count == 400)
    }
}

/// The reports passed on, in their order.
private final class Deliveries: Sendable {
    private let reports = Mutex<[(position: Int, fraction: Double)]>([])

    var all: [(position: Int, fraction: Double)] { reports.withLock { $0 } }

    func append(_ position: Int, _ fraction: Double) { reports.withLock { $0.append((position, fraction)) } }
}
