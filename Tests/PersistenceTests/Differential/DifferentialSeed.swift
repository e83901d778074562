import Foundation
import Testing

/// The seed the differential suite draws its stores from: fixed, so every run of the suite
/// (and CI) migrates the same stores, or any other through the environment:
///
/// ```sh
/// DIFFERENTIAL_SEED=42 swift test --filter Differential
/// ```
///
/// Every failure names the seed, so a failing run can be replayed.
enum DifferentialSeed {
    static let fixed: UInt64 = 20_261_124

    static let value: UInt64 = {
        guard let text = ProcessInfo.processInfo.environment["DIFFERENTIAL_SEED"] else { return fixed }
        guard let seed = UInt64(text) else { preconditionFailure("DIFFERENTIAL_SEED must be a whole number from 0 to \(UInt64.max), not '\(text)'") }
        return seed
    }()

    /// How to run a failure again.
    static var replay: String { "seed \(value); replay with DIFFERENTIAL_SEED=\(value) swift test --filter Differential" }

    /// The generator of one case: the seed mixed with the case's number.
    static func generator(forCase number: Int) -> SeededGenerator {
        SeededGenerator(state: value &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(number) &* 1_000_003)
    }
}
