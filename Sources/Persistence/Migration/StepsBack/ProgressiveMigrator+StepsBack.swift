extension ProgressiveMigrator {
    /// Whether `target` comes before `source` on the chain: the app's order where it gives
    /// one (`source` follows from `target`), else the order of the model's versions.
    func precedes(_ target: ManagedObjectModel, _ source: ManagedObjectModel) -> Bool {
        guard target.name != source.name else { return false }
        switch chain.route {
        case .versions(let next):
            var current = target.name
            var visited: Set<String> = [current]
            while let following = next[current], visited.insert(following).inserted {
                if following == source.name { return true }
                current = following
            }
            return false
        case .straight:
            let names = chain.models.versions.map(\.name)
            guard let targetIndex = names.firstIndex(of: target.name), let sourceIndex = names.firstIndex(of: source.name) else { return false }
            return targetIndex < sourceIndex
        }
    }

    /// The versions a store of `source` passes through back to the older `target`, `target`
    /// last: the way forward from `target` to `source`, walked backwards step by step — or
    /// one step, where a mapping model maps `source` to `target` straight.
    func pathBack(from source: ManagedObjectModel, to target: ManagedObjectModel, forward: [ManagedObjectModel]) -> [ManagedObjectModel] {
        if chain.mappingModels.contains(where: { $0.maps(from: source, to: target) }) { return [target] }
        return Array(([target] + forward).reversed().dropFirst())
    }

    /// The mapping models of the step back from `newer` to `older`: the ones that map it,
    /// in the order the chain was given them, else the inverse of the step forward
    /// (``StepBack``).
    ///
    /// - Throws: ``MigrationError/Code/irreversibleStep`` when there is none to infer.
    func mappingModelsBack(from newer: ManagedObjectModel, to older: ManagedObjectModel) throws -> [MappingModel] {
        let given = chain.mappingModels.filter { $0.maps(from: newer, to: older) }
        if !given.isEmpty { return given }
        let back = StepBack(
            older: older,
            newer: newer,
            forwardMappings: try chain.mappingModels(from: older, to: newer),
            forwardManager: chain.managers[newer.name] ?? MigrationManager.self,
            policies: chain.policies,
            logger: logger
        )
        return [try back.inferredMapping()]
    }

    /// Refuses, before anything is written, a plan back whose steps drop data for certain
    /// unless the caller accepts it; the rows of the first step's losses are counted on the
    /// store (read-only) for the message.
    func refuseUnacceptedDataLoss(of plan: MigrationPlan, at url: StoreURL, accepting: Bool) async throws {
        guard plan.goesBack, !accepting, plan.steps.contains(where: { $0.dataLossWarnings.contains(where: \.isCertain) }) else { return }
        let counted = (try? await plan.countingAffectedRows(in: url, logger: logger)) ?? plan
        let losses = counted.steps.enumerated().flatMap { index, step in
            step.dataLossWarnings.filter(\.isCertain).map {
                "step \(index + 1)/\(counted.steps.count) \(step.source.name) → \(step.destination.name): \($0)"
            }
        }
        throw MigrationError(
            .dataLossNotAccepted,
            "migrating back from '\(plan.storeVersion.name)' to '\(plan.targetVersion.name)' drops data: \(losses.joined(separator: "; "))",
            hint:
                "accept the loss to run it (acceptingDataLoss; the commands' --accept-data-loss), or give a mapping model back that carries it; the store was not changed",
            store: url.description
        )
    }

    /// Why a plan back does not run online: the replicas of the newer release write what the
    /// older version does not have, and the changes they make while it runs are carried
    /// forward only.
    static func noOnlineWayBack(_ plan: MigrationPlan, store: StoreURL) -> MigrationError {
        MigrationError(
            .cannotMigrateOnline,
            "migrating back from '\(plan.storeVersion.name)' to '\(plan.targetVersion.name)' does not run online: the writes made meanwhile are carried forward only",
            hint:
                "migrate back without --online, once the release that writes '\(plan.storeVersion.name)' no longer migrates the store at start-up; the store was not changed",
            store: store.description
        )
    }
}

extension MigrationPlan {
    /// Whether the plan takes the store back to an older version (every step is a step
    /// back, ``Step/isStepBack``).
    ///
    /// ```swift
    /// let plan = try await migrator.plan(forStoreAt: url, to: "BookStore 4") // a BookStore 5 store
    /// plan.goesBack // true: the synopses are dropped only if the caller accepts it
    /// ```
    public var goesBack: Bool { steps.first?.isStepBack ?? false }
}
