extension MigrationChain {
    /// How a chain finds the steps of a store.
    public enum Route: Sendable, Hashable {
        /// The app's order: model name → the model name its stores migrate to next.
        case versions(next: [String: String])
        /// Core Data's, which has no order of versions: straight from the store's version
        /// to the target (see ``MigrationChain/init(models:mappingModels:policies:)``).
        case straight
    }

    /// The versions a store of `source` passes through to `target` on a chain without an
    /// order of versions, `target` last: what ``ProgressiveMigrator`` runs for a chain whose
    /// route is ``Route/straight``.
    ///
    /// 1. The mapping models lead from `source` to `target` (one that maps the two, or
    ///    `v1 to v2`, `v2 to v3`, …): through them, the fewest steps.
    /// 2. Otherwise one inferred step, with as many of the mapping models around it as lead
    ///    from `source` to where it starts and from where it ends to `target`: an app that
    ///    migrates progressively with its mapping models gets them run, the gap between
    ///    them inferred.
    /// 3. Where no mapping model applies, that is one inferred step from `source` to
    ///    `target`, as Core Data migrates.
    ///
    /// ```swift
    /// let (versions, route) = chain.straightPath(from: storeVersion, to: models.current)
    /// ```
    public func straightPath(
        from source: ManagedObjectModel,
        to target: ManagedObjectModel
    ) -> (versions: [ManagedObjectModel], route: MigrationPlan.Route) {
        guard source.name != target.name else { return ([], .straight) }
        let versions = models.versions.contains(where: { $0.name == source.name }) ? models.versions : [source] + models.versions
        // Forward only: a mapping model back to an older version (a way back, see
        // ``ProgressiveMigrator/migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``)
        // is no way forward.
        let order = straightOrder()
        let maps = { (from: ManagedObjectModel, to: ManagedObjectModel) in
            guard mappingModels.contains(where: { $0.maps(from: from, to: to) }) else { return false }
            // Where the order says the history, a mapping model that leads to an earlier
            // version is a way back, never a way forward.
            guard order.saysTheHistory, let fromIndex = order.names.firstIndex(of: from.name), let toIndex = order.names.firstIndex(of: to.name)
            else { return true }
            return fromIndex < toIndex
        }
        // Mapping paths from the source onward, and from each version to the target: the
        // versions after the first, fewest steps first.
        let fromSource = Self.mappingPaths(from: source, in: versions) { maps($0, $1) }
        let toTarget = Self.mappingPaths(from: target, in: versions) { maps($1, $0) }.mapValues { Array($0.reversed().dropFirst()) + [target] }
        if let path = fromSource[target.name] { return (path, path.count == 1 ? .straight : .mappingModels) }
        var best: (path: [ManagedObjectModel], mapped: Int)?
        for start in [source] + versions where start.name == source.name || fromSource[start.name] != nil {
            let before = fromSource[start.name] ?? []
            for end in [target] + versions where end.name == target.name || toTarget[end.name] != nil {
                guard start.name != end.name else { continue }
                let after = end.name == target.name ? [] : toTarget[end.name]!
                let mapped = before.count + after.count
                let path = before + [end] + after
                guard best.map({ mapped > $0.mapped || (mapped == $0.mapped && path.count < $0.path.count) }) ?? true,
                    (try? MappingModel.inferred(from: start, to: end)) != nil
                else { continue }
                best = (path, mapped)
            }
        }
        guard let best, best.mapped > 0 else { return ([target], .straight) }
        return (best.path, .mappingModels)
    }

    /// Where a version stands among the others on a chain without an order of versions,
    /// for telling a way back from a way forward when a target is named
    /// (``straightOrder()``); `nil` for a version the models do not have.
    func straightRank(of version: ManagedObjectModel) -> Int? {
        straightOrder().names.firstIndex(of: version.name)
    }

    /// The versions of a chain without an order of its own, oldest first: by their
    /// identifiers where each has a number of its own (Xcode's Model Version Identifier `1`,
    /// `2`, `3`: an Apple project whose `.xccurrentversion` still names its first version
    /// keeps its history there); otherwise by name with the current version last.
    /// `saysTheHistory` is whether that order can be trusted to be the history: numbers, or
    /// names whose order puts the current version last anyway. Where it cannot, a mapping
    /// model back is not told from one forward when routing (give a chain, ``init(models:through:mappingModels:policies:)``
    /// or `--chain`, to say the history).
    func straightOrder() -> (names: [String], saysTheHistory: Bool) {
        let numbers = models.versions.map { VersionNumber($0.versionIdentifier) }
        if numbers.allSatisfy({ $0 != nil }), Set(numbers.map { $0!.significantParts }).count == numbers.count {
            return (zip(models.versions, numbers).sorted { $0.1! < $1.1! }.map(\.0.name), true)
        }
        let byName = models.versions.map(\.name)
        let current = models.current.name
        return (byName.filter { $0 != current } + [current], byName.last == current)
    }

    /// The fewest-step paths from `start` along `edge`, by the name of where each ends;
    /// each path leaves out `start`.
    private static func mappingPaths(
        from start: ManagedObjectModel,
        in versions: [ManagedObjectModel],
        edge: (ManagedObjectModel, ManagedObjectModel) -> Bool
    ) -> [String: [ManagedObjectModel]] {
        var paths: [String: [ManagedObjectModel]] = [:]
        var frontier = [start]
        while !frontier.isEmpty {
            var next: [ManagedObjectModel] = []
            for version in frontier {
                for other in versions where other.name != start.name && paths[other.name] == nil && edge(version, other) {
                    paths[other.name] = (paths[version.name] ?? []) + [other]
                    next.append(other)
                }
            }
            frontier = next
        }
        return paths
    }
}
