extension ProgressiveMigrator {
    /// Whether `target` comes before `source` on the chain: the app's order where it gives
    /// one (`source` follows from `target`), else ``MigrationChain/straightRank(of:)``.
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
            guard let targetRank = chain.straightRank(of: target), let sourceRank = chain.straightRank(of: source) else { return false }
            return targetRank < sourceRank
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
    /// (``DataLossWarning/isCertain`` and ``DataLossWarning/drops``) unless the caller
    /// accepts it; the rows concerned are counted on the store (read-only) for the message
    /// where they can be (``MigrationPlan/countingAffectedRows(in:logger:)``).
    func refuseUnacceptedDataLoss(of plan: MigrationPlan, at url: StoreURL, accepting: Bool) async throws {
        guard plan.goesBack, !accepting, plan.steps.contains(where: { $0.dataLossWarnings.contains(where: \.dropsForCertain) }) else { return }
        let counted: MigrationPlan
        do {
            counted = try await plan.countingAffectedRows(in: url, logger: logger)
        } catch {
            logger.notice("the rows a migration back would drop could not be counted", metadata: [LoggingKeys.store: "\(url)", "error": "\(error)"])
            counted = plan
        }
        let losses = counted.steps.enumerated().flatMap { index, step in
            step.dataLossWarnings.filter(\.dropsForCertain).map {
                "step \(index + 1)/\(counted.steps.count) \(step.source.name) → \(step.destination.name): \($0)\($0.affectedRows == nil ? " (rows not counted)" : "")"
            }
        }
        throw MigrationError(
            .dataLossNotAccepted,
            "migrating back from '\(plan.storeVersion.name)' to '\(plan.targetVersion.name)' drops data: \(losses.joined(separator: "; "))",
            hint:
                "accept the loss to run it (acceptingDataLoss: true), or give the chain a mapping model back that carries it; the store was not changed",
            store: url.description
        )
    }

    /// Refuses a plan made under the lock that goes the other way than the one made before
    /// it: another process migrated the store past the target meanwhile, and going back
    /// was not what the caller saw planned (nor going forward, for a caller that asked to go back).
    func refuseTurningBack(_ plan: MigrationPlan, from unlocked: MigrationPlan, at url: StoreURL) throws {
        guard plan.goesBack != unlocked.goesBack else { return }
        throw MigrationError(
            .noPath,
            "another process migrated the store to '\(plan.storeVersion.name)' meanwhile, so reaching '\(plan.targetVersion.name)' now means going \(plan.goesBack ? "back" : "forward"), which was not what was planned",
            hint: "plan the migration again (`migrate --plan`) and run it if that is still wanted; the store was not changed",
            store: url.description
        )
    }

    /// Refuses a migration without a target that would take a store taken back on purpose
    /// forward again (``StoreMetadata/migratedBackFrom``): opening a store, or a service's
    /// start-up, does not undo a rollback; naming the target does.
    func refuseUndoingRollback(_ plan: MigrationPlan, target: String?, at url: StoreURL) throws {
        guard target == nil, !plan.isEmpty, !plan.goesBack, let from = plan.storeMigratedBackFrom else { return }
        throw MigrationError(
            .storeRolledBack,
            "the store was migrated back from '\(from)' to '\(plan.storeVersion.name)' (a rollback); a migration without a target does not take it forward again",
            hint:
                "migrate it forward by naming the version (`migrate --to \"\(plan.targetVersion.name)\"`), or open it with the release that runs '\(plan.storeVersion.name)'; the store was not changed",
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
    /// Whether the plan takes the store back to an older version: its steps are steps
    /// back (``Step/isStepBack``), a target older than the store's named explicitly.
    ///
    /// ```swift
    /// let plan = try await migrator.plan(forStoreAt: url, to: "BookStore 4") // a BookStore 5 store
    /// plan.goesBack // true: the synopses are dropped only if the caller accepts it
    /// ```
    public var goesBack: Bool { steps.contains(where: \.isStepBack) }
}
