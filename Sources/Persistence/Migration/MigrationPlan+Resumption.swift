import Crypto
import Foundation

extension MigrationPlan.Step {
    /// Why an interrupted run of this step starts it again from its first row rather than
    /// continuing from its last batch; `nil` when it continues (see ``StepCheckpoint``).
    func whyNotResumable(policies: MigrationPolicies) -> String? {
        guard strategy == .streamed else { return "it is not streamed" }
        guard mappingModels.count == 1 else { return "it runs \(mappingModels.count) mapping models" }
        guard managerType.resumesAfterInterruption else {
            return "its migration manager \(String(describing: managerType)) does not say it resumes after an interruption"
        }
        for name in mappingModels[0].policyNames {
            guard let policy = policies.makePolicy(named: name) else { return "its entity migration policy \(name) is not registered" }
            guard type(of: policy).resumesAfterInterruption else {
                return "its entity migration policy \(name) does not say it resumes after an interruption"
            }
        }
        return nil
    }

    /// Says what the step does, as far as its output depends on it: the two models, the
    /// mapping model with its expressions, the policies and the manager. An output written
    /// for another fingerprint is not continued.
    var resumptionFingerprint: String {
        var text = "source \(source.name)\n"
        for (entity, hash) in source.entityVersionHashes.sorted(by: { $0.key < $1.key }) { text += "  \(entity) \(hash.base64EncodedString())\n" }
        text += "destination \(destination.name)\n"
        for (entity, hash) in destination.entityVersionHashes.sorted(by: { $0.key < $1.key }) {
            text += "  \(entity) \(hash.base64EncodedString())\n"
        }
        text += "manager \(String(reflecting: managerType))\n"
        for mappingModel in mappingModels {
            text += "mapping model \(mappingModel.name)\n"
            for mapping in mappingModel.entityMappings {
                text += "  \(mapping.name) \(mapping.type) \(mapping.sourceEntityName ?? "-") → \(mapping.destinationEntityName ?? "-")"
                text += " policy \(mapping.policyName ?? "-") filter \(mapping.sourceFilter.map { "\($0)" } ?? "-")\n"
                for property in mapping.attributeMappings + mapping.relationshipMappings {
                    text += "    \(property.name) = \(property.valueExpression.map { "\($0)" } ?? "-")"
                    text += " \(property.userInfo.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))\n"
                }
                text += "    \(mapping.userInfo.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))\n"
            }
        }
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension MigrationPlan {
    /// What the next run does with a streamed step's output when the step was killed
    /// halfway (``Step/resumption``).
    ///
    /// ```swift
    /// let plan = try await migrator.plan(forStoreAt: url)
    /// print(plan.steps[0].resumption.map(String.init(describing:)) ?? "not streamed")
    /// // "after a kill: continued from its last batch, …"
    /// ```
    public enum Resumption: Sendable, Hashable, CustomStringConvertible {
        /// Continued from the last batch written, when nothing was written to the store
        /// since. On PostgreSQL each step before it committed into the store; on SQLite the
        /// step reads the store, its copy migrated in place, or a file an earlier step of the
        /// killed run finished, which the next run takes as it is (a file that in-place steps
        /// changed after another step wrote it, or that a fused pass wrote, is not: the step
        /// then starts again, saying so).
        case fromLastBatch
        /// Started again from its first row, because of `reason`.
        case startsAgain(reason: String)

        /// `after a kill: …`: what the next run does with the step's output, as the plan prints it.
        public var description: String {
            switch self {
            case .fromLastBatch:
                "after a kill: continued from its last batch, unless the store was written to since"
            case .startsAgain(let reason):
                "after a kill: started again, because \(reason)"
            }
        }
    }
}
