/// Which root entity of the store's version each root entity of the plan's target version
/// is made from, for a plan whose steps keep every object's primary key.
///
/// An online migration migrates again the objects changed since its copy, on their own, and
/// replaces their earlier results by primary key: an object keeps its key from version to
/// version when each destination root entity is made from one source root entity, by
/// mappings that each take a source entity once (an identity range per mapping, from key 1
/// up, see ``AssociationIndex``). Policies and managers must read nothing but the
/// instances they are given (`fetchesFromStores` false): the changed objects are migrated
/// without the others.
///
/// ```swift
/// let keys = try OnlineKeyCorrespondence(plan: plan, policies: chain.policies)
/// keys.sourceRoot(ofTarget: "Publication")   // "Book", for BookStore 2 → 5
/// ```
struct OnlineKeyCorrespondence: Sendable {
    /// Target root entity → the store version's root entity its objects are made from.
    let sourceRootByTarget: [String: String]
    /// Target root entities made from no source entity (their tables start empty).
    let targetRootsWithoutSource: Set<String>

    func sourceRoot(ofTarget root: String) -> String? { sourceRootByTarget[root] }

    init(plan: MigrationPlan, policies: MigrationPolicies) throws(MigrationError) {
        // Store root → the current version's root it became.
        var current: [String: String] = [:]
        for entity in plan.storeVersion.entities where entity.parentName == nil { current[entity.name] = entity.name }
        for step in plan.steps {
            let label = "\(step.source.name) → \(step.destination.name)"
            try Self.refuseStoreReads(step, policies: policies, label: label)
            // A later mapping model's identity range starts above what the earlier ones
            // made, which differs between the copy and a round.
            guard step.mappingModels.count <= 1 else {
                throw Self.refusal(
                    "\(label) runs \(step.mappingModels.count) mapping models one after the other: the later ones' objects take keys above the earlier ones'"
                )
            }
            var stepRoots: [String: String] = [:]
            var madeFrom: [String: String] = [:]
            var mappedSources: Set<String> = []
            for mapping in step.mappingModels.flatMap(\.entityMappings) where mapping.type != .remove && mapping.type != .add {
                guard let sourceName = mapping.sourceEntityName, let source = step.source.entity(named: sourceName),
                    let destinationName = mapping.destinationEntityName, let destination = step.destination.entity(named: destinationName)
                else { continue }
                guard mappedSources.insert(sourceName).inserted else {
                    throw Self.refusal(
                        "\(sourceName) is migrated by more than one entity mapping in \(label): its second destinations take keys of their own"
                    )
                }
                let (sourceRoot, destinationRoot) = (step.source.rootEntity(of: source).name, step.destination.rootEntity(of: destination).name)
                if let other = stepRoots[sourceRoot], other != destinationRoot {
                    throw Self.refusal("\(sourceRoot) is migrated into both \(other) and \(destinationRoot) in \(label)")
                }
                if let other = madeFrom[destinationRoot], other != sourceRoot {
                    throw Self.refusal("\(destinationRoot) is made from both \(other) and \(sourceRoot) in \(label): their keys would be moved apart")
                }
                stepRoots[sourceRoot] = destinationRoot
                madeFrom[destinationRoot] = sourceRoot
            }
            var next: [String: String] = [:]
            for (storeRoot, root) in current {
                if let destination = stepRoots[root] { next[storeRoot] = destination }
            }
            current = next
        }
        var byTarget: [String: String] = [:]
        for (storeRoot, target) in current { byTarget[target] = storeRoot }
        sourceRootByTarget = byTarget
        let made = Set(current.values)
        targetRootsWithoutSource = Set(plan.targetVersion.entities.filter { $0.parentName == nil && !made.contains($0.name) }.map(\.name))
    }

    private static func refuseStoreReads(_ step: MigrationPlan.Step, policies: MigrationPolicies, label: String) throws(MigrationError) {
        if step.managerType.fetchesFromStores {
            throw refusal(
                "the migration manager \(String(describing: step.managerType)) of \(label) may fetch from the stores (it does not say `fetchesFromStores` is false)"
            )
        }
        for mapping in step.mappingModels.flatMap(\.entityMappings) {
            guard let name = mapping.policyName else { continue }
            guard let policy = policies.makePolicy(named: name) else { continue }  // the step itself says it is not registered
            if type(of: policy).fetchesFromStores {
                throw refusal(
                    "the policy \(name) of \(mapping.name) in \(label) may fetch from the stores (it does not say `fetchesFromStores` is false)"
                )
            }
        }
    }

    static func refusal(_ reason: String) -> MigrationError {
        MigrationError(
            .cannotMigrateOnline,
            "the migration cannot run online: \(reason)",
            hint: "migrate offline (without --online), which holds the store's writers off while it runs"
        )
    }
}
