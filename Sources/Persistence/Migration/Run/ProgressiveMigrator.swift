import Foundation
import Logging

/// Migrates a store from whatever version it is at to the current one (or `target`),
/// step by step along a ``MigrationChain``: the progressive-migration article's
/// `CoreDataMigrator`.
///
/// ```swift
/// let migrator = ProgressiveMigrator(chain: chain, logger: logger)
/// let updates = migrator.progressUpdates()           // subscribe first…
/// async let done = migrator.migrateStore(at: .sqlite("bookstore.sqlite"))
/// for await progress in updates { print(progress) }  // …it ends when the migration does
/// let plan = try await done
/// ```
///
/// Safety on SQLite: the WAL is checkpointed first; a plan of in-place steps only runs in
/// one transaction in the store; any other plan runs on copies in a work folder beside the
/// store, and the result replaces the original with one atomic rename. Until then the
/// original is untouched, so a failure, a cancellation or a crash leaves it as it was.
///
/// Safety on PostgreSQL: each step commits on its own, consecutive in-place steps in one
/// transaction, any other step (or fused pass of streamed steps, ``MigrationPlan/Fusion``)
/// in a shadow schema swapped in in one transaction. A failure,
/// a cancellation or a crash leaves the store whole at the version of its last completed
/// step, and the next run continues from there.
///
/// Both run through one `MigrationRun` over the store's `MigrationBackend`.
public final class ProgressiveMigrator: Sendable {
    /// The model versions, the way between them, the mapping models and the policies the migrator runs.
    public let chain: MigrationChain
    /// Source instances a streamed step reads, creates and saves at a time (each step's
    /// ``MigrationManager/Configuration/batchSize``), and rows validated at a time.
    public let batchSize: Int
    /// How long to wait for another process's migration of the same store.
    public let lockTimeout: Duration
    let logger: Logger
    let broadcast = ProgressBroadcast()
    /// Whether consecutive streamed steps that can run as one pass do
    /// (``MigrationPlan/Fusion``); with `false` every step runs on its own.
    public let fusesSteps: Bool
    /// Where tests make the migration fail; `nil` in use.
    let faultInjection: MigrationFaultInjection?
    /// Paces the streamed steps' batches and SQL chunks: an online migration's bulk run
    /// (``OnlineMigrationOptions/maximumRowsPerSecond``); `nil` writes as fast as it can.
    let throttle: MigrationThrottle?
    /// How every step runs where tests force it; `nil` lets the plan choose.
    let forcedStrategy: MigrationPlan.Strategy?

    /// A migrator of stores along `chain`.
    ///
    /// - Parameter chain: the versions a store goes through, with their mapping models and
    ///   policies.
    /// - Parameter batchSize: how many source instances a streamed step migrates and saves at
    ///   a time.
    /// - Parameter lockTimeout: how long to wait while another process migrates the store.
    /// - Parameter fusesSteps: run consecutive streamed steps as one pass where they can be
    ///   (the default); `false` runs every step on its own, writing each version in turn.
    /// - Parameter logger: where the migration's stages and progress are logged.
    public convenience init(
        chain: MigrationChain,
        batchSize: Int = 1_000,
        lockTimeout: Duration = .seconds(600),
        fusesSteps: Bool = true,
        logger: Logger
    ) {
        self.init(chain: chain, batchSize: batchSize, lockTimeout: lockTimeout, fusesSteps: fusesSteps, logger: logger, faultInjection: nil)
    }

    /// A migrator that calls `faultInjection` at each ``MigrationCheckpoint``, for tests
    /// that show what a failure at that point leaves.
    @_spi(Testing) public convenience init(
        chain: MigrationChain,
        batchSize: Int = 1_000,
        lockTimeout: Duration = .seconds(600),
        fusesSteps: Bool = true,
        logger: Logger,
        faultInjection: MigrationFaultInjection?
    ) {
        self.init(
            chain: chain,
            batchSize: batchSize,
            lockTimeout: lockTimeout,
            fusesSteps: fusesSteps,
            logger: logger,
            faultInjection: faultInjection,
            throttle: nil
        )
    }

    /// A migrator whose every step runs as `strategy` says, for tests that run one
    /// migration through each kind of step the plan can choose: `.inPlace` and `.setBased`
    /// where the step allows them (else the plan's choice, which the test then sees),
    /// `.streamed` always.
    @_spi(Testing) public convenience init(chain: MigrationChain, batchSize: Int = 1_000, logger: Logger, forcing strategy: MigrationPlan.Strategy) {
        self.init(
            chain: chain,
            batchSize: batchSize,
            lockTimeout: .seconds(600),
            fusesSteps: true,
            logger: logger,
            faultInjection: nil,
            throttle: nil,
            forcedStrategy: strategy
        )
    }

    init(
        chain: MigrationChain,
        batchSize: Int,
        lockTimeout: Duration,
        fusesSteps: Bool,
        logger: Logger,
        faultInjection: MigrationFaultInjection?,
        throttle: MigrationThrottle?,
        forcedStrategy: MigrationPlan.Strategy? = nil
    ) {
        self.chain = chain
        self.batchSize = max(1, batchSize)
        self.lockTimeout = lockTimeout
        self.fusesSteps = fusesSteps
        self.logger = logger
        self.faultInjection = faultInjection
        self.throttle = throttle
        self.forcedStrategy = forcedStrategy
    }

    /// Calls the fault injection, if any, at `checkpoint`.
    func pass(_ checkpoint: MigrationCheckpoint) throws {
        try faultInjection?(checkpoint)
    }

    /// Progress reports of the next migration; the sequence ends when that migration
    /// finishes. Subscribe before calling ``migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``.
    public func progressUpdates() -> AsyncStream<MigrationProgress> {
        broadcast.subscribe()
    }

    /// The model version a store was written by.
    ///
    /// - Throws: ``MigrationError/Code/newerStore`` when a newer model than the chain knows
    ///   wrote it, ``MigrationError/Code/unknownStoreVersion`` when it matches no version.
    public func storeVersion(of metadata: StoreMetadata, store: StoreURL) throws(MigrationError) -> ManagedObjectModel {
        try recognisedVersion(of: metadata, store: store).model
    }

    /// The model version a store was written by, and how that was decided: by its entity
    /// version hashes, or, for a SQLite store written by Apple's Core Data, by its tables
    /// (``VersionedModel/recogniseVersion(ofStoreAt:metadata:named:)``). `named` names the
    /// version of such a store when its tables fit several.
    ///
    /// ```swift
    /// let recognised = try migrator.recognisedVersion(of: metadata, store: url)
    /// print(recognised) // "CoreDataMigration_Example 2 (recognised by Core Data's version hashes)"
    /// ```
    ///
    /// - Throws: ``MigrationError/Code/newerStore`` when a newer model than the chain knows
    ///   wrote it, ``MigrationError/Code/unknownStoreVersion`` when it matches no version
    ///   (naming the locked version that wrote it as it shipped, when one did and its file
    ///   changed since), ``MigrationError/Code/lockedVersionChanged`` when another locked
    ///   version changed, ``MigrationError/Code/ambiguousStoreVersion`` when its tables fit several; a store
    ///   whose Core Data hashes name one version and whose tables are another's is an unknown
    ///   version too, said as ``StoreError/Code/inconsistentStore`` says it.
    public func recognisedVersion(
        of metadata: StoreMetadata,
        store: StoreURL,
        named name: String? = nil
    ) throws(MigrationError) -> RecognisedStoreVersion {
        if let refusal = chain.models.lockRefusal(storeMetadata: metadata) {
            throw MigrationError(
                refusal.writtenAsShipped ? .unknownStoreVersion : .lockedVersionChanged,
                refusal.message,
                hint: refusal.hint,
                store: store.description
            )
        }
        if name == nil, let version = chain.models.version(matching: metadata) {
            return RecognisedStoreVersion(model: version, method: .versionHashes)
        }
        let written = metadata.modelVersionName.map { "'\($0)'" } ?? "an unnamed model version"
        if isNewer(metadata) {
            throw MigrationError(
                .newerStore,
                "the store was written by \(written), which is newer than every version this app knows (the newest is '\(chain.models.current.name)')",
                hint: "open it with the newer version of the app; the store was not changed",
                store: store.description
            )
        }
        guard metadata.isForeign || name != nil else {
            throw MigrationError(
                .unknownStoreVersion,
                "the store was written by \(written), whose entity version hashes match none of \(chain.models.versions.map(\.name).joined(separator: ", "))",
                hint: "open it with the app that wrote it, or add that model version to the chain; the store was not changed",
                store: store.description
            )
        }
        do {
            return try chain.models.recogniseVersion(ofStoreAt: store, metadata: metadata, named: name)
        } catch let error as StoreError where error.code == .ambiguousModelVersion {
            throw MigrationError(.ambiguousStoreVersion, error.message, hint: error.hint, store: store.description)
        } catch let error as StoreError where error.code == .unknownModelVersion {
            throw MigrationError(.unknownStoreVersion, error.message, hint: error.hint, store: store.description)
        } catch let error as StoreError where error.code == .inconsistentStore {
            throw MigrationError(.unknownStoreVersion, error.message, hint: error.hint, store: store.description)
        } catch {
            throw MigrationError(
                .store,
                "cannot read the store's tables to recognise its model version",
                hint: "check that the store is readable; it was not changed",
                store: store.description,
                underlying: error
            )
        }
    }

    /// Whether the metadata names a version after the newest known one.
    private func isNewer(_ metadata: StoreMetadata) -> Bool {
        let known = chain.models.versions.map(\.versionIdentifier).compactMap(VersionNumber.init)
        let written = metadata.versionIdentifiers.compactMap(VersionNumber.init)
        guard let newestKnown = known.max(), let writtenVersion = written.max() else {
            // Unnumbered: "<name> N" beyond the known names.
            guard let name = metadata.modelVersionName, !chain.models.versions.contains(where: { $0.name == name }) else { return false }
            return name.hasPrefix(chain.models.name)
        }
        return writtenVersion > newestKnown
    }

    /// The steps from the store's version to `target` (the current version by default).
    /// `storeVersion` names the version of a store written by Apple's Core Data whose
    /// tables fit several versions (see ``recognisedVersion(of:store:named:)``).
    public func plan(forStoreAt url: StoreURL, to target: String? = nil, storeVersion: String? = nil) async throws -> MigrationPlan {
        let metadata = try await PersistentStore.metadata(at: url)
        let source = try recognisedVersion(of: metadata, store: url, named: storeVersion).model
        // The first step reads the store as it is laid out: its Z_PRIMARYKEY's numbers, and
        // the names its join tables, hidden keys and order columns have (Core Data's, or an
        // earlier release's). An in-memory store is migrated through open stores, which read
        // it themselves.
        let layout = try await url.engine.storeLayout(model: source)
        let external = ExternallyStoredValues(storeAt: url, metadata: metadata, model: source, layout: layout)
        var plan = try plan(from: source, to: target, store: url, storeLayout: layout, carrying: external)
        plan.storeMigratedBackFrom = metadata.migratedBackFrom
        if !plan.isEmpty, let tables = try url.engine.appleStoreStructure() {
            try refuseDroppingTables(tables.otherTables, of: url, in: plan)
        }
        return plan
    }

    /// A store of Apple's keeps the values of attributes that allow external storage in
    /// Core Data's cells, which a migrated store no longer reads so: the first step makes
    /// them plain, in place. Where that step is not in place, a step in place from the
    /// store's version to itself runs first, and the step after it reads a store laid out
    /// as a new one of that version.
    private func carry(
        _ external: ExternallyStoredValues,
        into steps: inout [MigrationPlan.Step],
        source: ManagedObjectModel,
        dialect: any SQLDialect,
        storeLayout: StoreLayout?
    ) throws {
        guard let first = steps.first else { return }
        if case .inPlace(var inPlace) = first.work {
            inPlace.externallyStoredValues = external
            steps[0].work = .inPlace(inPlace)
            return
        }
        let mapping = try MappingModel.inferred(from: source, to: source)
        guard
            case .success(var inPlace) = InPlaceMigration.plan(
                mapping: mapping,
                source: source,
                destination: source,
                dialect: dialect,
                sourceLayout: storeLayout
            )
        else {
            throw MigrationError(
                .store,
                "the store keeps \(external.attributes.joined(separator: ", ")) (Allows External Storage) as Core Data does, in its cells and in files beside it, and its tables cannot be laid out anew in place to carry them",
                hint:
                    "copy the store first (`persistence copy --models … --from \(external.store) --to …`): the copy holds the bytes in its cells and migrates; the store was not changed",
                store: external.store.description
            )
        }
        inPlace.externallyStoredValues = external
        steps[0] = try makeStep(from: source, to: first.destination, dialect: dialect, back: first.isStepBack)
        var carrying = MigrationPlan.Step(
            source: source,
            destination: source,
            mappingModels: [mapping],
            managerType: MigrationManager.self,
            work: .inPlace(inPlace)
        )
        // Part of the way back where the plan goes back: every step of it says so.
        carrying.isStepBack = first.isStepBack
        steps.insert(carrying, at: 0)
    }

    /// Steps that rebuild a store write a new one from the model's tables: tables beside
    /// them (persistent history's, CloudKit's, an app's own) would not be in it. Steps in
    /// place keep them. A PostgreSQL schema holding such tables is refused where a rebuild
    /// would drop it (``StoreError/Code/sharedSchema``).
    private func refuseDroppingTables(_ tables: Set<String>, of url: StoreURL, in plan: MigrationPlan) throws {
        guard let first = plan.steps.first(where: { $0.strategy != .inPlace }), !tables.isEmpty else { return }
        let names = tables.sorted().map { "\($0) (\(StoreStructure.owner(ofOtherTable: $0)))" }.joined(separator: ", ")
        throw MigrationError(
            .wouldDropTables,
            "step \(first.source.name) → \(first.destination.name) rebuilds the store (\(first.strategy.rawValue)), and the store has tables beside the model's that a rebuild does not carry: \(names)",
            hint:
                "migrate the store with the app that keeps those tables (Core Data, for persistent history or CloudKit, once they are turned off there), or drop them first; the store was not changed",
            store: url.description
        )
    }

    /// The steps from `source` to `target`. `storeLayout` is how the store is laid out (its
    /// `Z_PRIMARYKEY`'s numbers, its tables' names; ``StoreLayout``), by default as a new
    /// store of `source` is; every step leaves it laid out as a new store of its destination.
    public func plan(
        from source: ManagedObjectModel,
        to target: String? = nil,
        store: StoreURL,
        storeLayout: StoreLayout? = nil
    ) throws -> MigrationPlan {
        try plan(from: source, to: target, store: store, storeLayout: storeLayout, carrying: nil)
    }

    private func plan(
        from source: ManagedObjectModel,
        to target: String?,
        store: StoreURL,
        storeLayout: StoreLayout?,
        carrying external: ExternallyStoredValues?
    ) throws -> MigrationPlan {
        let targetModel: ManagedObjectModel
        if let target {
            guard let model = chain.models.version(namedOrNumbered: target) else {
                throw MigrationError(
                    .noPath,
                    "there is no model version named or numbered '\(target)'",
                    hint: "name one of \(chain.models.versions.map(\.name).joined(separator: ", ")), or its number",
                    store: store.description
                )
            }
            targetModel = model
        } else {
            targetModel = chain.models.current
        }
        // Back to an older version, only when asked for by name: the way forward from it,
        // walked backwards. Opening a store, or migrating it to the current version, never
        // takes it back (a store the app's chain has after the current version is refused).
        // Without a target on Core Data's way (no order of versions), the current version
        // is where a store goes, as Core Data takes it there.
        let straight = if case .straight = chain.route { true } else { false }
        let back = (target != nil || !straight) && precedes(targetModel, source)
        if back && target == nil {
            throw MigrationError(
                .newerStore,
                "the store is at '\(source.name)', after the current version '\(targetModel.name)': opening or migrating it to the current version does not take it back",
                hint:
                    "open it with the release whose current version is '\(source.name)', or migrate it back explicitly (`migrate --to \"\(targetModel.name)\"`); the store was not changed",
                store: store.description
            )
        }
        var (path, route) = try back ? self.path(from: targetModel, to: source, store: store) : self.path(from: source, to: targetModel, store: store)
        if back { path = pathBack(from: source, to: targetModel, forward: path) }
        let dialect = store.engine.migrationDialect
        var steps: [MigrationPlan.Step] = []
        var current = source
        for next in path {
            steps.append(try makeStep(from: current, to: next, dialect: dialect, sourceLayout: steps.isEmpty ? storeLayout : nil, back: back))
            current = next
        }
        // Not with a first step that lays the store out anew for Core Data's externally
        // stored values: the steps are planned again after it, from a new store's layout.
        let keeping = external == nil ? stepsLeavingRenumberingToRebuild(steps) : [:]
        // Planned again in order: the steps that keep numbers, and each step after one,
        // which reads them. The others read what they were planned for.
        for index in steps.indices where keeping[index] != nil || keeping[index - 1] != nil {
            let step = steps[index]
            steps[index] = try makeStep(
                from: step.source,
                to: step.destination,
                dialect: dialect,
                sourceLayout: index == 0 ? storeLayout : steps[index - 1].keptLayout,
                keeping: keeping[index] ?? .nothing,
                back: step.isStepBack
            )
        }
        if let external, let dialect = store.engine.migrationDialect {
            try carry(external, into: &steps, source: source, dialect: dialect, storeLayout: storeLayout)
        }
        planPasses(of: &steps, dialect: store.engine.migrationDialect, storeLayout: storeLayout)
        return MigrationPlan(storeVersion: source, targetVersion: targetModel, route: route, steps: steps)
    }

    /// The versions a store of `source` passes through to `target`, `target` last, and how
    /// they were found: the app's order where the chain has one, else Core Data's way.
    private func path(
        from source: ManagedObjectModel,
        to target: ManagedObjectModel,
        store: StoreURL
    ) throws -> ([ManagedObjectModel], MigrationPlan.Route) {
        guard case .versions(let next) = chain.route else { return chain.straightPath(from: source, to: target) }
        var path: [ManagedObjectModel] = []
        var current = source
        var visited: Set<String> = [source.name]
        while current.name != target.name {
            guard let nextName = next[current.name], let nextVersion = chain.models.version(named: nextName), visited.insert(nextName).inserted else {
                throw noPath(from: source, at: current, to: target, store: store)
            }
            path.append(nextVersion)
            current = nextVersion
        }
        return (path, .chain)
    }

    /// Why the chain has no way from `source` (stuck at `current`) to `target`, in the
    /// models' names: the target comes before the store's version, or no version follows
    /// `current` (or the chain turns in a circle there).
    private func noPath(
        from source: ManagedObjectModel,
        at current: ManagedObjectModel,
        to target: ManagedObjectModel,
        store: StoreURL
    ) -> MigrationError {
        let order = chain.models.versions.map(\.name)
        if let from = order.firstIndex(of: source.name), let to = order.firstIndex(of: target.name), to < from {
            return MigrationError(
                .noPath,
                "the store is at '\(source.name)', after '\(target.name)', and the chain leads from '\(target.name)' to '\(source.name)' by no way a migration back could walk",
                hint:
                    "name '\(target.name)' in the app's version list on the way to '\(source.name)', or open the store with the release that has '\(source.name)'; the store was not changed",
                store: store.description
            )
        }
        let stuck = chain.next[current.name] == nil ? "no version follows '\(current.name)'" : "the versions after '\(current.name)' lead back to it"
        return MigrationError(
            .noPath,
            "no step of the chain leads from '\(source.name)' to '\(target.name)': \(stuck)",
            hint: "name the version that follows '\(current.name)' in the app's version list; the store was not changed",
            store: store.description
        )
    }

    /// The step from `source` to `destination` as a store of `dialect`'s engine would run
    /// it: how, why it streams, and what it drops (``MigrationPlan/Step/dataLossWarnings``).
    /// Touches no store.
    ///
    /// ```swift
    /// let step = try migrator.step(from: v3, to: v4, dialect: .sqlite)
    /// print(step.strategy, step.streamingReason ?? "", step.dataLossWarnings)
    /// ```
    public func step(from source: ManagedObjectModel, to destination: ManagedObjectModel, dialect: some SQLDialect) throws -> MigrationPlan.Step {
        try makeStep(from: source, to: destination, dialect: dialect)
    }

    private func makeStep(
        from source: ManagedObjectModel,
        to destination: ManagedObjectModel,
        dialect: (any SQLDialect)?,
        sourceLayout: StoreLayout? = nil,
        keeping: InPlaceMigration.Keeping = .nothing,
        back: Bool = false
    ) throws -> MigrationPlan.Step {
        let mappings = try back ? mappingModelsBack(from: source, to: destination) : chain.mappingModels(from: source, to: destination)
        // Each pass after the ones before it: look-ups may name their entity mappings.
        for (index, mapping) in mappings.enumerated() {
            try mapping.check(source: source, destination: destination, passes: mappings.count == 1 ? .alone : .after(Array(mappings[..<index])))
        }
        // The chain's manager runs the step forward into its version; a step back, the standard one.
        let managerType = back ? MigrationManager.self : chain.managers[destination.name] ?? MigrationManager.self
        let warnings = StepDataLoss(source: source, destination: destination, mappingModels: mappings).warnings()
        func step(_ work: MigrationPlan.Work) -> MigrationPlan.Step {
            var step = MigrationPlan.Step(
                source: source,
                destination: destination,
                mappingModels: mappings,
                managerType: managerType,
                work: work,
                dataLossWarnings: warnings
            )
            step.isStepBack = back
            return step
        }
        func streamed(because reason: String) -> MigrationPlan.Step {
            let passes = mappings.map { mapping in
                managerType.init(
                    configuration: MigrationManager.Configuration(
                        sourceModel: source,
                        destinationModel: destination,
                        mappingModel: mapping,
                        policies: chain.policies,
                        logger: logger
                    )
                )
                .entityMappingPlans(dialect: dialect, sourceLayout: sourceLayout)
            }
            return step(.streamed(reason: reason, passes: passes))
        }
        guard let dialect else { return streamed(because: "an in-memory store is not migrated with SQL") }
        guard mappings.count == 1 else { return streamed(because: "the step has \(mappings.count) mapping models") }
        // A custom manager may hook into every instance: the step goes through it.
        guard managerType == MigrationManager.self else { return streamed(because: "its migration manager is \(String(describing: managerType))") }
        if forcedStrategy == .streamed { return streamed(because: "the migrator is forced to stream every step") }
        var reason = ""
        if mappings[0].isInferred, forcedStrategy != .setBased {
            switch InPlaceMigration.plan(
                mapping: mappings[0],
                source: source,
                destination: destination,
                dialect: dialect,
                sourceLayout: sourceLayout,
                keeping: keeping
            ) {
            case .success(let inPlace):
                // Where renumbering every row costs more than writing new tables, a rebuild;
                // not where the step checks values first, which the rebuild would not.
                if forcedStrategy == nil, inPlace.rewritesEveryRow, inPlace.checks.isEmpty, inPlace.countChecks.isEmpty,
                    dialect.rebuildsRatherThanRewritingEveryRow,
                    case .success(let setBased) = SetBasedMigration.plan(
                        mapping: mappings[0],
                        source: source,
                        destination: destination,
                        dialect: dialect,
                        sourceLayout: sourceLayout
                    )
                {
                    return step(.setBased(setBased))
                }
                return step(.inPlace(inPlace))
            case .failure(let unsupported): reason = unsupported.reason + "; "
            }
        }
        switch SetBasedMigration.plan(mapping: mappings[0], source: source, destination: destination, dialect: dialect, sourceLayout: sourceLayout) {
        case .success(let setBased): return step(.setBased(setBased))
        case .failure(let unsupported): return streamed(because: reason + unsupported.reason)
        }
    }

    /// Migrates the store at `url` to `target` (the current version by default); returns
    /// the plan it ran, empty when the store was current.
    ///
    /// - Throws: ``MigrationError``. A SQLite store is then as it was before the call; a
    ///   PostgreSQL store is whole at the version of its last completed step (the step that
    ///   failed left nothing behind).
    ///
    /// `storeVersion` names the version of a store written by Apple's Core Data whose
    /// tables fit several versions; other stores are recognised by their version hashes.
    ///
    /// Without a `target`, a store taken back on purpose (``StoreMetadata/migratedBackFrom``)
    /// is not taken forward again (``MigrationError/Code/storeRolledBack``): name the target to.
    ///
    /// A `target` older than the store's version takes it back (``MigrationPlan/goesBack``),
    /// step by step along the way forward: each step back by a mapping model from the newer
    /// version to the older where the chain has one, else by the inverse of the step forward
    /// where that step only added or renamed (otherwise ``MigrationError/Code/irreversibleStep``).
    /// A step back that drops data for certain — what the newer version added — runs only
    /// with `acceptingDataLoss`; without it the migration throws
    /// ``MigrationError/Code/dataLossNotAccepted`` before anything is written, saying what
    /// is dropped and how many rows of the store it concerns.
    ///
    /// ```swift
    /// // Rolling a deploy back: BookStore 5's store for the release that wrote BookStore 4.
    /// try await migrator.migrateStore(at: url, to: "BookStore 4", acceptingDataLoss: true)
    /// ```
    ///
    /// `progress` is called with each report, on the migration's own task, as
    /// ``progressUpdates()`` yields it: for a caller that keeps the latest one.
    @discardableResult
    public func migrateStore(
        at url: StoreURL,
        to target: String? = nil,
        storeVersion: String? = nil,
        acceptingDataLoss: Bool = false,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> MigrationPlan {
        defer { broadcast.finish() }
        do {
            return try await migrateStoreUnclassified(
                at: url,
                to: target,
                storeVersion: storeVersion,
                acceptingDataLoss: acceptingDataLoss,
                progress: progress
            )
        } catch let error as MigrationError where error.code == .cancelled || error.code == .storage {
            throw error
        } catch  where Task.isCancelled && DatabaseCancellation.isCancellation(error) {
            // Cancelled while planning or waiting for the lock, before any step ran.
            throw MigrationError(
                .cancelled,
                "the migration was cancelled",
                hint: "the store was not changed; run the migration again",
                store: url.description
            )
        } catch {
            // What failed before a step ran (the lock, the work folder, the store's copy) left the store as it was.
            throw MigrationError.storage(error, doing: nil, store: url, afterwards: "the store was not changed") ?? error
        }
    }

    private func migrateStoreUnclassified(
        at url: StoreURL,
        to target: String?,
        storeVersion: String?,
        acceptingDataLoss: Bool,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationPlan {
        // A current store is the common case: find out without taking the lock.
        let unlocked = try await plan(forStoreAt: url, to: target, storeVersion: storeVersion)
        try await refuseUnacceptedDataLoss(of: unlocked, at: url, accepting: acceptingDataLoss)
        try refuseUndoingRollback(unlocked, target: target, at: url)
        guard !unlocked.isEmpty else {
            logger.debug("store is current", metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(unlocked.storeVersion.name)"])
            try await removeLeftoversOfKilledRuns(at: url, plan: unlocked)
            return unlocked
        }
        let backend = try url.engine.migrationBackend()
        // One migrator at a time; whoever waited finds the store as the other left it.
        let lock: any MigrationLock
        switch try await lockOrMigratedPlan(backend, storeAt: url, to: target, destination: unlocked.targetVersion) {
        case .locked(let held): lock = held
        case .migratedMeanwhile(let plan): return plan
        }
        do {
            var attempt = 1
            while true {
                do {
                    let plan = try await migrateLocked(url, to: target, storeVersion: storeVersion) { plan in
                        // Planned again under the lock: a store changed meanwhile is refused as it is now.
                        try refuseTurningBack(plan, from: unlocked, at: url)
                        try await refuseUnacceptedDataLoss(of: plan, at: url, accepting: acceptingDataLoss)
                        try refuseUndoingRollback(plan, target: target, at: url)
                        let workload = await MigrationWorkload.measuring(plan, at: url, logger: logger)
                        try await MigrationRun(migrator: self, plan: plan, backend: backend, workload: workload, onProgress: progress).run()
                    }
                    await lock.release()
                    return plan
                } catch is StoreWrittenDuringReplacement where attempt < StoreWrittenDuringReplacement.attempts {
                    // The store is unchanged and holds that write: migrated again, it has it.
                    attempt += 1
                    logger.notice(
                        "another process wrote to the store in the instant the migration let its lock go to write the migrated store in; migrating again",
                        metadata: [
                            LoggingKeys.store: "\(url)", "persistence.migration.attempt": "\(attempt) of \(StoreWrittenDuringReplacement.attempts)",
                        ]
                    )
                }
            }
        } catch let written as StoreWrittenDuringReplacement {
            await lock.release()
            throw written.error
        } catch is MigrationAbort {
            // As a killed process: the lock goes with the process, its file stays.
            await lock.abandon()
            throw MigrationAbort()
        } catch {
            await DatabaseCancellation.shielded { await lock.release() }
            throw error
        }
    }

    /// Removes, under the lock, what a run killed after it migrated the store (`plan` is
    /// empty) left beside it, if anything.
    func removeLeftoversOfKilledRuns(at url: StoreURL, plan: MigrationPlan) async throws {
        guard let backend = try? url.engine.migrationBackend(), await backend.hasLeftoversOfKilledRuns() else { return }
        try await removeLeftovers(of: backend, plan: plan)
    }

    /// Removes, under the lock, what a run killed after it migrated the store left beside it.
    /// A run that holds the lock is alive, cleaning up after its migration: what is beside
    /// the store is its own, and this does not wait for it.
    private func removeLeftovers(of backend: any MigrationBackend, plan: MigrationPlan) async throws {
        let lock: any MigrationLock
        do {
            lock = try await backend.acquireLock(timeout: .zero, logger: logger)
        } catch let error as MigrationError where error.code == .storeBusy {
            logger.debug(
                "what a migration left beside the store is left to the migration that holds its lock",
                metadata: [LoggingKeys.store: "\(backend.store)"]
            )
            return
        }
        do {
            let workspace = try await backend.prepareWorkspace(for: plan, logger: logger)
            await workspace.cleanUp()
        } catch {
            await lock.release()
            throw error
        }
        await lock.release()
        logger.notice("removed what a migration killed after it migrated the store left beside it", metadata: [LoggingKeys.store: "\(backend.store)"])
    }

    /// Plans again under the lock (another process may have migrated meanwhile), then runs.
    private func migrateLocked(
        _ url: StoreURL,
        to target: String?,
        storeVersion: String?,
        run: (MigrationPlan) async throws -> Void
    ) async throws -> MigrationPlan {
        // A store migrated meanwhile carries our hashes; a name given for the old version no longer applies.
        let metadata = try await PersistentStore.metadata(at: url)
        let named = metadata.isForeign ? storeVersion : nil
        let plan = try await self.plan(forStoreAt: url, to: target, storeVersion: named)
        guard !plan.isEmpty else {
            logger.info(
                "store was migrated by another process meanwhile",
                metadata: [LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)"]
            )
            return plan
        }
        logger.info(
            "migrating store",
            metadata: [
                LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.storeVersion.name)",
                "persistence.migration.target": "\(plan.targetVersion.name)", "persistence.migration.steps": "\(plan.steps.count)",
            ]
        )
        let started = ContinuousClock.now
        try await run(plan)
        logger.info(
            "migrated store",
            metadata: [
                LoggingKeys.store: "\(url)", LoggingKeys.modelVersion: "\(plan.targetVersion.name)",
                LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
            ]
        )
        return plan
    }

    /// The logger with the step on every line (`persistence.migration.step=3/4 BookStore 3 →
    /// BookStore 4`), for the stages a step's migration manager and validation log.
    func logger(forStep index: Int, of count: Int, _ step: MigrationPlan.Step) -> Logger {
        var logger = self.logger
        logger[metadataKey: LoggingKeys.migrationStep] = "\(index + 1)/\(count) \(step.source.name) → \(step.destination.name)"
        return logger
    }

    /// Reports what step `index` of `plan` says of itself as part of the whole plan: its
    /// fraction weighted by the step's share of the ``MigrationWorkload``, with the time
    /// spent and the time left. Returns the report its subscribers got.
    @discardableResult
    func report(
        _ report: StepReport,
        step index: Int,
        of plan: MigrationPlan,
        workload: MigrationWorkload,
        since start: MigrationWorkload.Start
    ) -> MigrationProgress {
        let now = ContinuousClock.now
        let step = plan.steps[index]
        let fraction = workload.fraction(step: index, stepFraction: report.fraction)
        let progress = MigrationProgress(
            fractionCompleted: fraction,
            stepFractionCompleted: report.fraction,
            step: index + 1,
            stepCount: plan.steps.count,
            sourceVersion: step.source.name,
            destinationVersion: step.destination.name,
            stage: report.stage,
            subject: report.subject,
            instancesDone: report.done,
            instancesTotal: report.total,
            elapsed: now - workload.started,
            estimatedTimeRemaining: workload.estimatedTimeRemaining(fraction: fraction, since: start, now: now)
        )
        broadcast.yield(progress)
        var metadata: Logger.Metadata = [
            LoggingKeys.migrationStep: "\(index + 1)/\(plan.steps.count) \(progress.sourceVersion) → \(progress.destinationVersion)",
            LoggingKeys.migrationStage: "\(progress.stage.rawValue)",
            LoggingKeys.progress: "\(progress.percent)%",
        ]
        switch progress.subject {
        case .entityMapping(let name)?: metadata[LoggingKeys.entityMapping] = "\(name)"
        case .entity(let name)?: metadata[LoggingKeys.entity] = "\(name)"
        case nil: break
        }
        if progress.subject != nil { metadata[LoggingKeys.rows] = "\(progress.instancesDone)/\(progress.instancesTotal)" }
        logger.debug("migration progress", metadata: metadata)
        return progress
    }
}

/// A dotted version number (`2`, `1.1`, `2.0`), compared part by part.
struct VersionNumber: Comparable {
    let parts: [Int]

    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return nil }
        self.parts = parts.map { $0! }
    }

    /// The parts without trailing zeros: `1` and `1.0` are one version.
    var significantParts: [Int] {
        var parts = self.parts
        while parts.count > 1, parts.last == 0 { parts.removeLast() }
        return parts
    }

    static func < (lhs: VersionNumber, rhs: VersionNumber) -> Bool {
        for index in 0..<max(lhs.parts.count, rhs.parts.count) {
            let l = index < lhs.parts.count ? lhs.parts[index] : 0
            let r = index < rhs.parts.count ? rhs.parts[index] : 0
            if l != r { return l < r }
        }
        return false
    }
}

extension ProgressiveMigrator {
    /// Opens the store at `url` with the chain's current model, migrating it first when an
    /// older version wrote it: Core Data's `loadPersistentStores` with automatic migration.
    ///
    /// ```swift
    /// let store = try await migrator.openStore(at: url)
    /// let container = PersistentContainer(store: store, logger: logger)
    /// ```
    ///
    /// A current store is opened once, its metadata read on the store's own writer: no
    /// connection is made to ask the migrator first, which on PostgreSQL is most of the
    /// time opening takes. An older one is migrated (``migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``,
    /// progress through ``progressUpdates()``) and then opened — forward only: a store the
    /// chain has after the current version is refused (``MigrationError/Code/newerStore``),
    /// and one taken back on purpose is not taken forward again
    /// (``MigrationError/Code/storeRolledBack``; see <doc:MigratingBack>).
    ///
    /// - Throws: ``StoreError`` from opening (``StoreError/Code/storeNotFound`` without
    ///   `createIfMissing`), ``MigrationError`` from migrating.
    public func openStore(
        at url: StoreURL,
        options: PersistentStore.Options = .existingOnly,
        storeVersion: String? = nil
    ) async throws -> PersistentStore {
        let store: PersistentStore
        do {
            store = try await PersistentStore.open(url, model: chain.models.current, options: options, logger: logger)
        } catch let error as StoreError where error.code == .incompatibleModel {
            // Ends the progress updates, as every migration does.
            try await migrateStore(at: url, storeVersion: storeVersion)
            return try await PersistentStore.open(url, model: chain.models.current, options: options, logger: logger)
        } catch {
            broadcast.finish()
            throw error
        }
        broadcast.finish()
        return store
    }
}
