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
            guard let policy = policies.makePolicy(named: name), type(of: policy).resumesAfterInterruption else {
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
        for (entity, hash) in destination.entityVersionHashes.sorted(by: { $0.key < $1.key }) { text += "  \(entity) \(hash.base64EncodedString())\n" }
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
