import Crypto
import Foundation

extension MigrationPlan {
    /// Whether a step runs in one pass with the step after it.
    ///
    /// Two consecutive streamed steps are *fused* when the objects the first one makes one
    /// by one can be handed to the second one's mapping in memory: each batch is read from
    /// the store once, goes through both steps' policies and hooks, and only the second
    /// step's objects are written. What the first step makes as SQL (pages copied with
    /// `INSERT … SELECT`) is still written to its own intermediate store, which the second
    /// step reads as SQL. Fusing changes no row of the result.
    ///
    /// ```swift
    /// let plan = try await migrator.plan(forStoreAt: url)
    /// for step in plan.steps { print(step.fusionWithNext.map(String.init(describing:)) ?? "last") }
    /// // "fused with the next step: Publication carried in memory"
    /// ```
    public enum Fusion: Sendable, Hashable, CustomStringConvertible {
        /// One pass with the next step, the listed entity mappings' objects handed over in memory.
        case fused(carried: [CarriedMapping])
        /// Step by step, because of `reason`.
        case notFused(reason: String)

        /// Whether the step runs in one pass with the next one.
        public var isFused: Bool {
            if case .fused = self { true } else { false }
        }

        /// `fused with the next step: … carried in memory` or `not fused with the next step, because …`.
        public var description: String {
            switch self {
            case .fused(let carried):
                "fused with the next step: \(carried.map(\.entityName).joined(separator: ", ")) carried in memory"
            case .notFused(let reason):
                "not fused with the next step, because \(reason)"
            }
        }
    }

    /// An entity whose objects one step makes one by one and the next step's mapping
    /// takes from it in memory.
    public struct CarriedMapping: Sendable, Hashable {
        /// The first step's entity mapping, which makes the objects.
        public let upstream: String
        /// The next step's entity mapping, which migrates them.
        public let downstream: String
        /// Their entity, the first step's destination and the next step's source.
        public let entityName: String
    }
}

extension Array where Element == MigrationPlan.Step {
    /// The steps that run in one pass with step `index` (``MigrationPlan/Fusion``), it
    /// among them: `index...index` for a step fused with neither neighbour.
    func fusedPass(containing index: Int) -> ClosedRange<Int> {
        var (first, last) = (index, index)
        while first > 0, self[first - 1].fusionWithNext?.isFused == true { first -= 1 }
        while last + 1 < count, self[last].fusionWithNext?.isFused == true { last += 1 }
        return first...last
    }
}

extension MigrationPlan {
    /// Why an interrupted fused pass of `steps` (``Fusion``) starts again from its first
    /// row rather than continuing from the last batch its last step wrote; `nil` when it
    /// continues.
    static func whyNotResumable(fusedPass steps: [Step], policies: MigrationPolicies) -> String? {
        guard steps.count == 2 else { return "the pass has \(steps.count) steps: a pass of two is continued, not more" }
        for step in steps {
            if let why = step.whyNotResumable(policies: policies) { return "step \(step.source.name) → \(step.destination.name): \(why)" }
        }
        return nil
    }

    /// The fingerprint of each step of a fused pass of `steps`: its own
    /// (``Step/resumptionFingerprint``) with the pass's and its place in it, so that a
    /// step's output of a fused pass is never continued by the step alone, nor the other way.
    static func resumptionFingerprints(fusedPass steps: [Step]) -> [String] {
        let pass = steps.map(\.resumptionFingerprint).joined(separator: "\n")
        return steps.indices.map { position in
            SHA256.hash(data: Data("fused pass\n\(pass)\nposition \(position)".utf8)).map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The fingerprints of every output a run of this plan may continue: each step's
    /// (``Step/resumptionFingerprint``) and those of the steps of each fused pass.
    var continuableFingerprints: Set<String> {
        var fingerprints = Set(steps.map(\.resumptionFingerprint))
        var index = 0
        while index < steps.count {
            let pass = steps.fusedPass(containing: index)
            if pass.count > 1 { fingerprints.formUnion(Self.resumptionFingerprints(fusedPass: Array(steps[pass]))) }
            index = pass.upperBound + 1
        }
        return fingerprints
    }
}
