import Foundation
import Logging

extension MigrationManager {
    /// Migrates the store at `sourceURL` (left as it is) into the store at
    /// `destinationURL` (created for the destination model when missing; a later mapping
    /// model of the same step adds to it).
    ///
    /// ```swift
    /// let manager = MigrationManager(configuration: .init(sourceModel: v3, destinationModel: v4,
    ///                                                     mappingModel: model3To4, policies: policies, logger: logger))
    /// try await manager.migrateStore(from: .sqlite("v3.sqlite"), to: .sqlite("v4.sqlite"))
    /// ```
    ///
    /// - Throws: ``MigrationError`` (``MigrationError/Code/validationFailed`` when the result
    ///   breaks the destination model's rules, ``MigrationError/Code/cancelled`` when the
    ///   task is cancelled). The source store is never written.
    public func migrateStore(from sourceURL: StoreURL, to destinationURL: StoreURL) async throws {
        _ = try await migratePass(from: sourceURL, to: destinationURL)
    }

    /// ``migrateStore(from:to:)`` as one pass of a step: returns what the step's passes
    /// have made so far, this one's included, for the next (see ``Configuration/stepAssociations``).
    func migratePass(from sourceURL: StoreURL, to destinationURL: StoreURL) async throws -> StepAssociations {
        // The source is opened read-only: nothing, not even a WAL file, is written beside it.
        let source = try await PersistentStore.open(sourceURL, model: sourceModel, options: .readOnly, logger: logger)
        let destination: PersistentStore
        do {
            destination = try await PersistentStore.open(
                destinationURL,
                model: destinationModel,
                options: configuration.destinationOptions,
                logger: logger
            )
        } catch {
            await source.close()
            throw error
        }
        let made: StepAssociations
        do {
            made = try await runStages(source: source, destination: destination)
        } catch {
            await source.close()
            await destination.close()
            throw error
        }
        await source.close()
        await destination.close()
        return made
    }

    /// The three stages from `source` into `destination`, both open. In a fused pass the
    /// upstream step's stores are handed over open: its destination is the next step's source,
    /// and `fused` links the step with its neighbours.
    ///
    /// Sequences the stages only: the association index (``prepareAssociations(source:destination:resumed:upstream:)``),
    /// the run (``beginRun(source:destination:associations:resumed:fused:)``), how each entity
    /// mapping runs (``prepareStages(source:destination:associations:sourceRows:resumed:fused:)``),
    /// then stage 1 (``createInstancesStage(_:counter:)``), stage 2
    /// (``createRelationshipsStage(_:counter:)``) and stage 3
    /// (``validateAndSaveStage(_:counter:)``), and the end (``endStages(_:counter:)``).
    func runStages(
        source: PersistentStore,
        destination: PersistentStore,
        fused: FusedNeighbours = FusedNeighbours()
    ) async throws -> StepAssociations {
        let resumed = configuration.checkpointing?.resumeFrom
        let (associations, sourceRows) = try await prepareAssociations(
            source: source,
            destination: destination,
            resumed: resumed,
            upstream: fused.upstream
        )
        beginRun(source: source, destination: destination, associations: associations, resumed: resumed, fused: fused)
        defer { state.withLock { $0.run = nil } }
        let run = try await prepareStages(
            source: source,
            destination: destination,
            associations: associations,
            sourceRows: sourceRows,
            resumed: resumed?.checkpoint,
            fused: fused
        )
        var counter = try await ProgressCounter(
            manager: self,
            mappings: run.mappings,
            costs: ProgressCounter.costs(instances: run.instanceStages, relationships: run.relationshipStages),
            carriedRows: carriedRows(sourceRows)
        )
        try await createInstancesStage(run, counter: &counter)
        try await createRelationshipsStage(run, counter: &counter)
        try await validateAndSaveStage(run, counter: &counter)
        return try await endStages(run, counter: counter)
    }

    /// What the stages of one run share, found before stage 1.
    struct StagedRun {
        let source: PersistentStore
        let destination: PersistentStore
        let mappings: [EntityMapping]
        /// Each entity mapping's policy, by mapping name.
        let policies: [String: EntityMigrationPolicy]
        let associations: AssociationIndex
        /// The rows of each mapping's source root table when the step began.
        let sourceRows: [String: Int]
        /// The source store attached to the destination's connection, where some instances
        /// are made in SQL; `nil` where the stores cannot see each other.
        let access: SourceAccess?
        let instanceStages: [String: InstanceStage]
        let relationshipStages: [String: RelationshipStage]
        /// Where an interrupted run got to; `nil` when the step starts from its first row.
        let resumed: StepCheckpoint?
        /// In a fused pass, the links with the steps before and after.
        let fused: FusedNeighbours

        /// In a fused pass, the link this step hands instances to the next one through.
        var handing: FusedLink? { fused.downstream }

        /// The stage the run starts in: stage 1 unless an interrupted run got further.
        var resumedStage: StepCheckpoint.Stage { resumed?.stage ?? .instances }

        /// Where an interrupted run left `mapping` in stage 1 (its last source key written
        /// and its rows done); `nil` when it was not the mapping that run was in.
        func resumedPosition(of mapping: EntityMapping) -> (lastSourceKey: Int64, done: Int)? {
            guard let resumed, resumed.mapping == mapping.name else { return nil }
            return (resumed.lastSourceKey, resumed.done)
        }

        /// Whether some entity mapping makes its instances in SQL (``InstanceStage/sql(_:)``).
        var insertsInSQL: Bool {
            instanceStages.values.contains {
                switch $0 {
                case .sql, .declared: true
                case .perInstance: false
                }
            }
        }
    }

    /// The association index the stages record source to destination pairs in, with the
    /// rows of each mapping's source: restored from what an interrupted run left, or made
    /// (and, for a checkpointed step, recorded in the output with an empty checkpoint).
    private func prepareAssociations(
        source: PersistentStore,
        destination: PersistentStore,
        resumed: SavedStep?,
        upstream: FusedLink?
    ) async throws -> (AssociationIndex, [String: Int]) {
        // The carried instances' keys are where the step before put them, not in the source store.
        let carried = try await upstream?.readyKeysByDownstreamMapping() ?? [:]
        if let resumed {
            return (try await restoreAssociationIndex(resumed, source: source, destination: destination), resumed.sourceRows)
        }
        let (associations, sourceRows) = try await makeAssociationIndex(source: source, destination: destination, carried: carried)
        if let checkpointing = configuration.checkpointing {
            try await StepCheckpointTable(database: destination.database).create(
                SavedStep(
                    fingerprint: checkpointing.fingerprint,
                    sourceMark: checkpointing.sourceMark,
                    keys: associations.allKeys.mapValues(SavedKeys.init),
                    sourceRows: sourceRows,
                    checkpoint: StepCheckpoint()
                )
            )
        }
        return (associations, sourceRows)
    }

    /// Begins the run: its contexts over both stores, its association index and, for a
    /// checkpointed step, where it starts. The run begins whole and ends whole: nothing
    /// of it outlives ``migrateStore(from:to:)``.
    private func beginRun(
        source: PersistentStore,
        destination: PersistentStore,
        associations: AssociationIndex,
        resumed: SavedStep?,
        fused: FusedNeighbours
    ) {
        var run = Run(
            sourceContext: ManagedObjectContext(store: source, logger: logger),
            destinationContext: ManagedObjectContext(store: destination, logger: logger),
            associations: associations,
            fused: fused
        )
        if configuration.checkpointing != nil {
            run.checkpoint = resumed?.checkpoint ?? StepCheckpoint()
            run.checkpointWritten = run.checkpoint
        }
        state.withLock {
            $0.run = run
            $0.progress = 0
        }
    }

    /// Finds each entity mapping's policy and how its instances and relationships are
    /// made (``stages(policies:dialect:sourceLayout:tracksIdentities:)``), and attaches
    /// the source store where some instances are made in SQL.
    private func prepareStages(
        source: PersistentStore,
        destination: PersistentStore,
        associations: AssociationIndex,
        sourceRows: [String: Int],
        resumed: StepCheckpoint?,
        fused: FusedNeighbours
    ) async throws -> StagedRun {
        let mappings = mappingModel.entityMappings
        let policies = try makePolicies(for: mappings)
        let access = SourceAccess(source: source.url, destination: destination.url)
        let planned = self.stages(
            policies: policies,
            dialect: access == nil ? nil : destination.schema.dialect,
            sourceLayout: source.schema.layout,
            tracksIdentities: { associations.keys(of: $0)?.identities != nil }
        )
        try checkFusedStages(planned)
        let stages = planned.mapValues(\.relationships)
        let instanceStages = planned.compactMapValues(\.instances)
        updateRun {
            $0.relationshipStages = stages
            $0.instanceStages = instanceStages
        }
        let run = StagedRun(
            source: source,
            destination: destination,
            mappings: mappings,
            policies: policies,
            associations: associations,
            sourceRows: sourceRows,
            access: access,
            instanceStages: instanceStages,
            relationshipStages: stages,
            resumed: resumed,
            fused: fused
        )
        if let access, run.insertsInSQL {
            try await access.open(on: destination.database)
        }
        return run
    }

    /// Each entity mapping's policy: the one registered under its name, or the default.
    ///
    /// - Throws: ``MigrationError/Code/unknownPolicy`` for a name no policy is registered as.
    private func makePolicies(for mappings: [EntityMapping]) throws -> [String: EntityMigrationPolicy] {
        var policies: [String: EntityMigrationPolicy] = [:]
        for mapping in mappings {
            if let name = mapping.policyName {
                guard let policy = configuration.policies.makePolicy(named: name) else {
                    throw MigrationError(
                        .unknownPolicy,
                        "the entity migration policy '\(name)' is not registered",
                        hint:
                            "register it with MigrationPolicies.register(_:as:) before migrating (registered: \(configuration.policies.names.joined(separator: ", ")))",
                        file: mappingModel.file,
                        entityMapping: mapping.name
                    )
                }
                policies[mapping.name] = policy
            } else {
                policies[mapping.name] = EntityMigrationPolicy()
            }
        }
        return policies
    }

    /// Stage 1: create destination instances, mapping by mapping, then clear the foreign
    /// keys written with them that lead nowhere. Skipped when an interrupted run got past it.
    private func createInstancesStage(_ run: StagedRun, counter: inout ProgressCounter) async throws {
        guard run.resumedStage == .instances else { return }
        // A step that hands instances to the next one makes the others first (SQL, whose
        // keys are fixed already), so that the next step can read them once it starts
        // taking the handed ones.
        let order =
            run.handing.map { link in run.mappings.filter { !link.hands($0.name) } + run.mappings.filter { link.hands($0.name) } } ?? run.mappings
        for mapping in order {
            try await createInstances(of: mapping, in: run, counter: &counter)
        }
        let written = run.mappings.compactMap { mapping -> (mapping: EntityMapping, lookups: [RelationshipStage.ForeignKeyLookup])? in
            guard case .foreignKeys(let lookups)? = run.relationshipStages[mapping.name], !lookups.isEmpty else { return nil }
            return (mapping, lookups)
        }
        try await clearDanglingForeignKeys(
            written,
            destination: run.destination,
            associations: run.associations,
            sourceRows: run.sourceRows,
            readByNextStep: run.handing != nil
        )
    }

    /// Stage 1 for one entity mapping: its policy begun, its instances made (in SQL, from
    /// the instances the step before hands over, or batch by batch from the source), its
    /// instance creation ended and the last batch saved.
    private func createInstances(of mapping: EntityMapping, in run: StagedRun, counter: inout ProgressCounter) async throws {
        let policy = run.policies[mapping.name]!
        // Announced once the mappings made before the handed ones are in, whether the
        // handed ones are still to be made or were made by an interrupted run: the next
        // step reads what those wrote.
        if let handing = run.handing, handing.hands(mapping.name), !handing.isAnnounced {
            announceKeys(to: handing, associations: run.associations, sourceRows: run.sourceRows)
        }
        if run.resumed?.createdMappings.contains(mapping.name) == true {
            // Written whole by the interrupted run; its policy begins again all the same.
            setCurrent(mapping)
            try await policy.begin(mapping, with: self)
            let rows = try await run.associations.pairCount(mapping: mapping.name)
            counter.advance(.createInstances, .entityMapping(mapping.name), by: rows, done: rows)
            updateRun { $0.createdMappings.insert(mapping.name) }
            return
        }
        setCurrent(mapping)
        try await policy.begin(mapping, with: self)
        let started = ContinuousClock.now
        var done = 0
        var declaredHooks: DeclaredHooks?
        if case .sql(let insert)? = run.instanceStages[mapping.name], let access = run.access {
            done = try await insertInstances(of: mapping, with: insert, access: access, in: run, counter: &counter)
        } else if case .declared(let declared)? = run.instanceStages[mapping.name], let access = run.access {
            (done, declaredHooks) = try await declareInstances(
                of: mapping,
                with: declared,
                policy: policy,
                access: access,
                in: run,
                counter: &counter
            )
        } else if let link = run.fused.upstream, let upstream = link.upstream(of: mapping.name) {
            done = try await takeInstances(of: mapping, policy: policy, from: link, upstream: upstream, in: run, counter: &counter)
        } else if let sourceName = mapping.sourceEntityName, mapping.type != .remove {
            done = try await readInstances(of: mapping, from: sourceName, policy: policy, in: run, counter: &counter)
        }
        try await policy.endInstanceCreation(forMapping: mapping, manager: self)
        try declaredHooks?.checkUndeclared(after: "endInstanceCreation")
        if let handing = run.handing, handing.hands(mapping.name) {
            try endHandingOver(mapping, to: handing, associations: run.associations, sourceRows: run.sourceRows)
        }
        checkpointMappingCreated(mapping.name)
        try await flushBatch()
        updateRun { $0.createdMappings.insert(mapping.name) }
        try logStage(.createInstances, mapping: mapping, rows: done, since: started, parts: partClock.take())
    }

    /// Stage 1 for a mapping whose instances are made in SQL (``runInstanceInsert(_:after:done:access:source:destination:associations:)``),
    /// from where an interrupted run's chunks got to; returns the mapping's rows written.
    private func insertInstances(
        of mapping: EntityMapping,
        with insert: EntityMappingInsert,
        access: SourceAccess,
        in run: StagedRun,
        counter: inout ProgressCounter
    ) async throws -> Int {
        // The interrupted run's chunks up to its last source key are in.
        let (after, resumedDone) = run.resumedPosition(of: mapping) ?? (0, 0)
        let done = try await runInstanceInsert(
            insert,
            after: after,
            done: resumedDone,
            access: access,
            source: run.source,
            destination: run.destination,
            associations: run.associations
        )
        counter.advance(.createInstances, .entityMapping(mapping.name), by: done, done: done)
        return done
    }

    /// Stage 1 for a mapping of a fused pass that takes its source instances from the
    /// step before (its `upstream` mapping) through `link`, batch by batch; returns the
    /// mapping's instances done.
    private func takeInstances(
        of mapping: EntityMapping,
        policy: EntityMigrationPolicy,
        from link: FusedLink,
        upstream: String,
        in run: StagedRun,
        counter: inout ProgressCounter
    ) async throws -> Int {
        var done = 0
        if let resumed = run.resumedPosition(of: mapping) {
            // The step before hands over only what follows the last batch written.
            done = resumed.done
            counter.advance(.createInstances, .entityMapping(mapping.name), by: done, done: done)
        }
        // Never pipelined: the step runs in a fused pass (see ``pipelinesBatches(of:policy:)``).
        return try await createBatches(of: mapping, pipelined: false, done: done) {
            guard let batch = try await partClock.time(.read, { try await link.next(mapping: upstream) }) else { return nil }
            try checkCancellation()
            try await partClock.time(.hooks) {
                for instance in batch {
                    try await policy.createDestinationInstances(forSource: instance, in: mapping, manager: self)
                }
            }
            // The handed objects carry the keys the step before gave them, in order.
            return MadeBatch(lastSourceKey: batch.last?.objectID.primaryKey, count: batch.count)
        } committed: { count, done in
            counter.advance(.createInstances, .entityMapping(mapping.name), by: count, done: done)
            try pass(.rowsCreated(step: configuration.stepNumber, entityMapping: mapping.name, rows: done))
        }
    }

    /// Stage 1 for a mapping whose policy makes its instances from the source's instances
    /// of `sourceName`, read batch by batch in key order after where an interrupted run
    /// got to; returns the mapping's instances done.
    private func readInstances(
        of mapping: EntityMapping,
        from sourceName: String,
        policy: EntityMigrationPolicy,
        in run: StagedRun,
        counter: inout ProgressCounter
    ) async throws -> Int {
        var last: Int64 = 0
        var done = 0
        if let resumed = run.resumedPosition(of: mapping) {
            (last, done) = resumed
            counter.advance(.createInstances, .entityMapping(mapping.name), by: done, done: done)
        }
        let pipelined = !run.fused.isFused && pipelinesBatches(of: mapping, policy: policy)
        return try await createBatches(of: mapping, pipelined: pipelined, done: done) {
            try checkCancellation()
            guard let (end, count) = try await createInstances(of: sourceName, after: last, mapping: mapping, policy: policy) else {
                return nil
            }
            last = end
            return MadeBatch(lastSourceKey: end, count: count)
        } committed: { count, done in
            counter.advance(.createInstances, .entityMapping(mapping.name), by: count, done: done)
            try pass(.rowsCreated(step: configuration.stepNumber, entityMapping: mapping.name, rows: done))
        }
    }

    /// Stage 2: create relationships, destination by destination, where they were not
    /// written with the instances. Once one is written, an interrupted run cannot be
    /// continued: the checkpoint says so with the first. Ends with the checkpoint at
    /// stage 3, saved.
    private func createRelationshipsStage(_ run: StagedRun, counter: inout ProgressCounter) async throws {
        let writesRelationshipsOneByOne = run.mappings.contains { mapping in
            if case .foreignKeys? = run.relationshipStages[mapping.name] { false } else { mapping.type != .remove }
        }
        if writesRelationshipsOneByOne { checkpointStage(.relationships) }
        for mapping in run.mappings where mapping.type != .remove && run.resumedStage == .instances {
            try await createRelationships(of: mapping, in: run, counter: &counter)
        }
        checkpointStage(.validation)
        try await flushBatch()
    }

    /// Stage 2 for one entity mapping: nothing to do where its foreign keys were written
    /// with its instances; otherwise its policy sets each destination's relationships, a
    /// batch of associated pairs at a time.
    private func createRelationships(of mapping: EntityMapping, in run: StagedRun, counter: inout ProgressCounter) async throws {
        let policy = run.policies[mapping.name]!
        setCurrent(mapping)
        let started = ContinuousClock.now
        var done = 0
        if case .foreignKeys = run.relationshipStages[mapping.name] {
            done = try await run.associations.pairCount(mapping: mapping.name)
            if done > 0 { counter.advance(.createRelationships, .entityMapping(mapping.name), by: done, done: done) }
        } else if let sourceName = mapping.sourceEntityName, let destinationName = mapping.destinationEntityName,
            let sourceEntity = sourceModel.entity(named: sourceName), let destinationEntity = destinationModel.entity(named: destinationName)
        {
            let sourceRoot = sourceModel.rootEntity(of: sourceEntity).name
            let destinationRoot = destinationModel.rootEntity(of: destinationEntity).name
            var cursor: AssociationIndex.Cursor? = .start
            while let after = cursor {
                try checkCancellation()
                let (pairs, next) = try await run.associations.pairs(mapping: mapping.name, after: after, limit: configuration.batchSize)
                cursor = next
                guard !pairs.isEmpty else { break }
                try await createRelationships(
                    for: pairs,
                    sourceEntity: sourceEntity,
                    sourceRoot: sourceRoot,
                    destinationRoot: destinationRoot,
                    mapping: mapping,
                    policy: policy
                )
                try await flushBatch()
                done += pairs.count
                counter.advance(.createRelationships, .entityMapping(mapping.name), by: pairs.count, done: done)
            }
        }
        try await policy.endRelationshipCreation(forMapping: mapping, manager: self)
        try await flushBatch()
        try logStage(.createRelationships, mapping: mapping, rows: done, since: started)
    }

    /// Stage 3: validate every destination object against the model, then the policies'
    /// own checks, each mapping's policy ended. The bulk writes are done: indexes a
    /// workspace store deferred are built in one pass each. Not in an intermediate store
    /// of a fused pass, which the next step reads meanwhile and which is discarded.
    private func validateAndSaveStage(_ run: StagedRun, counter: inout ProgressCounter) async throws {
        if run.resumedStage == .validation {
            // The interrupted run's policies began every mapping; this run's begin them too.
            for mapping in run.mappings {
                setCurrent(mapping)
                try await run.policies[mapping.name]!.begin(mapping, with: self)
            }
        }
        if run.handing == nil { try await run.destination.buildDeferredIndexes() }
        try await validateDestination(counter: &counter, separately: run.handing != nil)
        for mapping in run.mappings {
            let policy = run.policies[mapping.name]!
            setCurrent(mapping)
            try await policy.performCustomValidation(forMapping: mapping, manager: self)
            try await policy.end(mapping, manager: self)
            try await flushBatch()
        }
        setCurrent(nil)
    }

    /// Ends the stages: the association table dropped where nothing reads it any more, the
    /// source store detached, the step reported finished. Returns what the step's passes
    /// have made so far, this one's included.
    private func endStages(_ run: StagedRun, counter: ProgressCounter) async throws -> StepAssociations {
        // Alone, the association served this mapping model only, and the store is handed
        // over without it; a step's later mapping models may still look its pairs up.
        if configuration.stepAssociations == nil, run.handing == nil {
            try await run.associations.table.drop()
        }
        if let access = run.access, run.insertsInSQL {
            try await access.close(on: run.destination.database)
        }
        counter.finish()
        return StepAssociations(entityMappings: (configuration.stepAssociations?.entityMappings ?? []) + run.mappings, keys: run.associations.allKeys)
    }

    /// Runs the policy over the next batch of source instances of `mapping` after the key
    /// `last`; returns the batch's last key and size, `nil` when none are left. The batch's
    /// objects are held here only, so that ``flushBatch()`` can forget them once it is saved.
    private func createInstances(
        of sourceName: String,
        after last: Int64,
        mapping: EntityMapping,
        policy: EntityMigrationPolicy
    ) async throws -> (end: Int64, count: Int)? {
        let batch = try await partClock.time(.read) {
            try await sourceContext.fetchBatch(
                entityName: sourceName,
                predicate: mapping.sourceFilter,
                after: last,
                limit: configuration.batchSize
            )
        }
        guard let end = batch.last?.objectID.primaryKey else { return nil }
        try await partClock.time(.hooks) {
            for instance in batch {
                try await policy.createDestinationInstances(forSource: instance, in: mapping, manager: self)
            }
        }
        return (end, batch.count)
    }

    /// Runs the policy's relationship stage over a batch of associated pairs.
    private func createRelationships(
        for pairs: [(source: Int64, destination: Int64)],
        sourceEntity: EntityDescription,
        sourceRoot: String,
        destinationRoot: String,
        mapping: EntityMapping,
        policy: EntityMigrationPolicy
    ) async throws {
        let sources = try await sourceContext.objects(rootEntityName: sourceRoot, primaryKeys: pairs.map(\.source))
        let destinations = try await destinationContext.objects(rootEntityName: destinationRoot, primaryKeys: pairs.map(\.destination))
        try await prefetchRelationships(of: Array(sources.values), entity: sourceEntity)
        var batch: [(ManagedObject, ManagedObject)] = []
        for pair in pairs {
            if let s = sources[pair.source], let d = destinations[pair.destination] { batch.append((s, d)) }
        }
        updateRun { run in
            run.batch.sources = [:]
            for (s, d) in batch { run.batch.sources[d.objectID] = s }
        }
        for (_, destination) in batch {
            try await policy.createRelationships(forDestination: destination, in: mapping, manager: self)
        }
    }

    /// Creates an entity mapping's instances with `INSERT … SELECT`, one chunk of source
    /// keys after `after` at a time, and records their identity pairs from the keys read;
    /// returns the rows of the mapping written, `done` of them before. Each chunk's
    /// transaction records how far the mapping got, so a killed run loses one chunk, not
    /// the mapping.
    private func runInstanceInsert(
        _ insert: EntityMappingInsert,
        after: Int64,
        done: Int,
        access: SourceAccess,
        source: PersistentStore,
        destination: PersistentStore,
        associations: AssociationIndex
    ) async throws -> Int {
        guard associations.keys(of: insert.mapping) != nil else { return done }
        var offsets: [String: Int64] = [:]
        for mapping in mappingModel.entityMappings {
            if let keys = associations.keys(of: mapping.name) { offsets[mapping.name] = keys.offset }
        }
        var (last, written) = (after, done)
        while true {
            try checkCancellation()
            let keysSQL: SQL = """
                SELECT \(storeName: "Z_PK") FROM \(identifier: insert.sourceTable.name) WHERE \(storeName: "Z_ENT") = \(literal: insert.sourceTable.entityNumber) \
                AND \(storeName: "Z_PK") > \(last) ORDER BY \(storeName: "Z_PK") LIMIT \(sqlChunkRows)
                """
            let keys = try await source.database.read { try $0.rows(keysSQL).compactMap { $0[0].int64 } }
            guard let end = keys.last else { break }
            let sql = insert.statement(sourceKeysAfter: last, upTo: end).resolved(sourceSchema: access.schema, offsets: offsets)
            checkpointBatch(of: insert.mapping, last: end, done: written + keys.count)
            let checkpoint = pendingCheckpoint()
            do {
                written += try await destination.database.write { connection in
                    let written = try connection.run(sql)
                    if let checkpoint { try StepCheckpointTable.write(checkpoint, on: connection) }
                    return written
                }
            } catch let error as DatabaseError {
                throw MigrationError(.store, "writing migrated objects failed", entityMapping: insert.mapping, underlying: error)
            }
            checkpointCommitted(checkpoint)
            associations.claimIdentities(mapping: insert.mapping, sources: keys)
            last = end
            try pass(.rowsCreated(step: configuration.stepNumber, entityMapping: insert.mapping, rows: written))
            try await configuration.throttle?.pace(rows: keys.count)
        }
        return written
    }

    /// Source rows per `INSERT … SELECT` of an entity mapping's instances, fifty batches:
    /// what a killed run loses at most (at the default batch size, about a tenth of a
    /// second of PostgreSQL's time), few enough statements to cost nothing measurable.
    private var sqlChunkRows: Int { min(max(configuration.batchSize, 1), 1_000_000) * 50 }

    private func setCurrent(_ mapping: EntityMapping?) {
        updateRun { $0.currentEntityMapping = mapping }
    }

    func checkCancellation() throws {
        if Task.isCancelled {
            throw MigrationError(.cancelled, "the migration was cancelled", hint: "the source store was not changed; run the migration again")
        }
    }

    /// Saves the destination without validation, records the batch's associations, and
    /// makes both contexts forget the batch's objects so memory does not grow; objects a
    /// policy still holds (a look-up in ``userInfo``) stay registered and usable.
    ///
    /// The first destination an entity mapping associates with a source is saved under the
    /// source's key plus the mapping's offset (an identity pair, one bit); other pairs are
    /// written to the association table. Destinations of mappings whose relationships are
    /// look-ups get those foreign keys now (see ``RelationshipStage/foreignKeys(_:)``).
    func flushBatch() async throws {
        try await saveBatch()
        // Once the batch's own references are gone (they lived in `saveBatch`), what is
        // still held elsewhere is what a policy kept.
        forgetBatchObjects()
    }

    /// Makes both contexts forget the objects of the batch just saved or handed over,
    /// keeping those a policy still holds.
    func forgetBatchObjects() {
        sourceContext.forgetObjectsNotHeldElsewhere()
        destinationContext.forgetObjectsNotHeldElsewhere()
    }

    private func saveBatch() async throws {
        guard let batch = try await partClock.time(.prepare, { try prepareBatchSave() }) else { return }
        // A save with no object to write still writes what goes with it.
        if batch.writesAnything {
            try await partClock.time(.write) {
                try await writingBatch {
                    // ``flushBatch()`` forgets the batch next, registering what a policy holds.
                    try await destinationContext.save(
                        validating: false,
                        assignedKeys: batch.assignedKeys,
                        insertsInBulk: true,
                        registeringSaved: false,
                        alsoWriting: batch.alsoWriting
                    )
                }
            }
        }
        batchCommitted(batch)
    }

    /// Ends the run's batch and works out how to write it: the key each destination takes
    /// (see ``flushBatch()``), the association rows of the others, the foreign keys set
    /// from look-ups, and the checkpoint that counts it.
    func prepareBatchSave() throws -> BatchSave? {
        guard
            let (pending, stages, created, associations) = updateRun({ run in
                (run.batch.startNext(), run.relationshipStages, run.createdMappings, run.associations)
            })
        else { return nil }
        var assigned: [ObjectID: Int64] = [:]
        assigned.reserveCapacity(pending.count)
        var exceptions: [Pending] = []
        var expectedEntities: [String: EntityDescription] = [:]
        for mapping in mappingModel.entityMappings {
            if let name = mapping.destinationEntityName { expectedEntities[mapping.name] = destinationModel.entity(named: name) }
        }
        for pair in pending {
            // The association keeps keys of the mapping's destination table only; an instance
            // of another entity would later be looked up in the wrong table.
            if let expected = expectedEntities[pair.mapping], pair.destination.entity.name != expected.name,
                !destinationModel.entity(pair.destination.entity, isKindOf: expected)
            {
                let name = expected.name
                throw MigrationError(
                    .evaluationFailed,
                    "a \(pair.destination.entity.name) was associated with the entity mapping \(pair.mapping), whose instances are \(name)s",
                    hint:
                        "associate each destination instance with the entity mapping that creates its entity; link other instances with relationships",
                    file: mappingModel.file,
                    entityMapping: pair.mapping
                )
            }
            guard let source = pair.source.objectID.primaryKey else {
                throw MigrationError(.evaluationFailed, "an associated source instance was never saved", entityMapping: pair.mapping)
            }
            let id = pair.destination.objectID
            if id.isTemporaryID, assigned[id] == nil, pair.destination.isInserted, !pair.destination.isDeleted,
                let key = associations.claimIdentity(mapping: pair.mapping, source: source, destinationRoot: id.rootEntityName)
            {
                assigned[id] = key
            } else {
                exceptions.append(pair)
            }
            if case .foreignKeys(let lookups)? = stages[pair.mapping], !lookups.isEmpty {
                writeForeignKeys(lookups, of: pair.destination, from: pair.source, associations: associations, created: created)
            }
        }
        var unsaved: [BatchSave.AssociationRow] = []
        for pair in exceptions {
            guard let source = pair.source.objectID.primaryKey else {
                throw MigrationError(.evaluationFailed, "an associated instance was deleted or never saved", entityMapping: pair.mapping)
            }
            unsaved.append(.init(mapping: pair.mapping, source: source, destination: pair.destination.objectID))
        }
        // The batch's rows, its association rows and the checkpoint that counts it: one
        // transaction, so that a killed run leaves all of them or none.
        let checkpoint = pendingCheckpoint()
        let (table, pairs) = (associations.table, unsaved)
        let alsoWriting: ManagedObjectContext.AlsoWriting = { connection, keyOf in
            var rows: [(mapping: String, source: Int64, destination: Int64)] = []
            rows.reserveCapacity(pairs.count)
            for pair in pairs {
                guard let destination = keyOf(pair.destination) else {
                    throw MigrationError(.evaluationFailed, "an associated instance was deleted or never saved", entityMapping: pair.mapping)
                }
                rows.append((pair.mapping, pair.source, destination))
            }
            try table.insert(rows, on: connection)
            if let checkpoint { try StepCheckpointTable.write(checkpoint, on: connection) }
        }
        return BatchSave(
            assignedKeys: assigned,
            associationRows: unsaved,
            associations: associations,
            checkpoint: checkpoint,
            alsoWriting: alsoWriting,
            writesAnything: destinationContext.hasChanges || !pairs.isEmpty || checkpoint != nil
        )
    }

    /// Notes what a batch's committed transaction wrote besides its objects.
    func batchCommitted(_ batch: BatchSave) {
        checkpointCommitted(batch.checkpoint)
        for (mapping, rows) in Dictionary(grouping: batch.associationRows, by: \.mapping) {
            batch.associations.noteExceptions(rows.count, mapping: mapping)
        }
    }

    /// Runs a batch's write, saying which entity mapping's objects failed to be written.
    func writingBatch<T>(_ write: () async throws -> T) async throws -> T {
        do {
            return try await write()
        } catch let error as StoreError {
            throw MigrationError(.store, "writing migrated objects failed", entityMapping: currentEntityMapping?.name, underlying: error)
        } catch let error as DatabaseError {
            throw MigrationError(.store, "writing migrated objects failed", entityMapping: currentEntityMapping?.name, underlying: error)
        }
    }

    /// Validates the destination store. `separately`: through a context of its own, not
    /// the destination context, whose resets would detach objects the next fused step
    /// still migrates.
    private func validateDestination(counter: inout ProgressCounter, separately: Bool) async throws {
        let context = separately ? ManagedObjectContext(store: destinationContext.store, logger: logger) : destinationContext
        try await MigrationValidation(model: destinationModel, batchSize: configuration.batchSize, logger: logger, file: mappingModel.file)
            .validate(context) { entity, rows in counter.advance(.validateAndSave, .entity(entity), by: rows, done: rows, total: rows) }
    }

    private func logStage(
        _ stage: MigrationProgress.Stage,
        mapping: EntityMapping,
        rows: Int,
        since started: ContinuousClock.Instant,
        parts: StagePartClock.Times? = nil
    ) throws {
        var metadata: Logger.Metadata = [
            LoggingKeys.migrationStage: "\(stage.rawValue)",
            LoggingKeys.entityMapping: "\(mapping.name)",
            LoggingKeys.rows: "\(rows)",
            LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
        ]
        if let parts, parts != StagePartClock.Times() {
            metadata[LoggingKeys.readMilliseconds] = "\(Self.milliseconds(parts.read))"
            metadata[LoggingKeys.hooksMilliseconds] = "\(Self.milliseconds(parts.hooks))"
            metadata[LoggingKeys.prepareMilliseconds] = "\(Self.milliseconds(parts.prepare))"
            metadata[LoggingKeys.writeMilliseconds] = "\(Self.milliseconds(parts.write))"
        }
        logger.info("migration stage", metadata: metadata)
        try pass(.stageFinished(step: configuration.stepNumber, stage: stage, entityMapping: mapping.name))
    }

    /// A part's time in milliseconds, to the tenth.
    private static func milliseconds(_ duration: Duration) -> Double {
        (duration / .milliseconds(1) * 10).rounded() / 10
    }

    /// Calls the fault injection a ``ProgressiveMigrator`` set, if any.
    private func pass(_ checkpoint: MigrationCheckpoint) throws {
        try configuration.faultInjection?(checkpoint)
    }
}

/// Turns instances done into the step's fraction, each row of each stage weighed by what it
/// costs, estimated from the kind of work (``Cost``), so that the fraction moves with the time
/// a step takes rather than a third per stage: a stage of foreign keys written with the
/// instances costs nothing, one that runs a hook per instance a great deal.
struct ProgressCounter {
    let manager: MigrationManager
    /// Source instances of each mapping, counted before stage 1.
    let totals: [String: Int]
    let total: Int
    /// What a row of each mapping costs in each stage.
    let costs: [String: Cost]
    /// The step's whole work, in the costs' unit, and the work done so far.
    let work: Double
    var done: Double = 0

    /// What a row costs in each stage, in rows of an `INSERT … SELECT` (the measured
    /// figures of docs/PERFORMANCE.md, rounded: a row made by a hook with declared values
    /// costs about three, one made by a hook given whole objects about twelve).
    struct Cost: Sendable {
        var instances: Double
        var relationships: Double
        /// Validation reads each row once, in SQL, and checks few of them in Swift.
        var validation = 0.5

        static let sql = 1.0
        static let declared = 3.0
        static let perInstance = 12.0
        static let relationshipsPerInstance = 6.0
    }

    /// Each mapping's costs from how its stages run.
    static func costs(instances: [String: InstanceStage], relationships: [String: RelationshipStage]) -> [String: Cost] {
        var costs: [String: Cost] = [:]
        for (mapping, stage) in relationships {
            let instanceCost: Double =
                switch instances[mapping] {
                case .sql?: Cost.sql
                case .declared?: Cost.declared
                case .perInstance?, nil: Cost.perInstance
                }
            let relationshipCost: Double =
                switch stage {
                case .foreignKeys: 0
                case .perInstance: Cost.relationshipsPerInstance
                }
            costs[mapping] = Cost(instances: instanceCost, relationships: relationshipCost)
        }
        return costs
    }

    /// `carriedRows`: the instances of entity mappings that take them from the step before
    /// in a fused pass, which the source store does not hold. A mapping without costs counts
    /// as one made by a hook per instance.
    init(manager: MigrationManager, mappings: [EntityMapping], costs: [String: Cost] = [:], carriedRows: [String: Int] = [:]) async throws {
        self.manager = manager
        var totals: [String: Int] = [:]
        for mapping in mappings where mapping.type != .remove {
            if let rows = carriedRows[mapping.name] {
                totals[mapping.name] = rows
                continue
            }
            guard let name = mapping.sourceEntityName else { continue }
            var request = FetchRequest(entityName: name, predicate: mapping.sourceFilter)
            request.includesSubentities = false
            totals[mapping.name] = try await manager.sourceContext.count(for: request)
        }
        self.totals = totals
        self.total = totals.values.reduce(0, +)
        self.costs = costs
        var work = 0.0
        for (mapping, rows) in totals {
            let cost = costs[mapping] ?? Cost(instances: Cost.perInstance, relationships: Cost.relationshipsPerInstance)
            work += Double(rows) * (cost.instances + cost.relationships + cost.validation)
        }
        self.work = work
    }

    /// `count` more instances of `subject` done in `stage`, `done` of them so far; `total`
    /// is the subject's count when it is not an entity mapping's (counted before stage 1).
    mutating func advance(_ stage: MigrationProgress.Stage, _ subject: MigrationProgress.Subject, by count: Int, done: Int, total: Int? = nil) {
        self.done += Double(count) * cost(of: stage, subject)
        let fraction = work > 0 ? self.done / work : 0
        let mappingTotal: Int? = if case .entityMapping(let name) = subject { totals[name] } else { nil }
        report(stage, fraction: min(fraction, 0.99), subject: subject, done: done, total: total ?? mappingTotal ?? done)
    }

    /// What a row of `subject` costs in `stage`.
    private func cost(of stage: MigrationProgress.Stage, _ subject: MigrationProgress.Subject) -> Double {
        let mapping: String? = if case .entityMapping(let name) = subject { name } else { nil }
        let cost = mapping.flatMap { costs[$0] } ?? Cost(instances: Cost.perInstance, relationships: Cost.relationshipsPerInstance)
        switch stage {
        case .createInstances: return cost.instances
        case .createRelationships: return cost.relationships
        case .validateAndSave: return cost.validation
        default: return 0
        }
    }

    func finish() {
        report(.finished, fraction: 1, subject: nil, done: total, total: total)
    }

    private func report(_ stage: MigrationProgress.Stage, fraction: Double, subject: MigrationProgress.Subject?, done: Int, total: Int) {
        manager.state.withLock { $0.progress = fraction }
        let model = manager.mappingModel
        manager.progressDidChange(
            MigrationProgress(
                fractionCompleted: fraction,
                stepFractionCompleted: fraction,
                step: 1,
                stepCount: 1,
                sourceVersion: model.sourceModelName,
                destinationVersion: model.destinationModelName,
                stage: stage,
                subject: subject,
                instancesDone: done,
                instancesTotal: max(total, done)
            )
        )
    }
}
