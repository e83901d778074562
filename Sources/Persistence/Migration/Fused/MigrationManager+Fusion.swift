/// A step's neighbours in a fused pass (see ``MigrationPlan/Fusion``): the link its
/// carried source instances come through from the step before, and the one its carried
/// instances go through to the next; `nil` where the step has no such neighbour. The fused
/// run gives them to each step's manager with its stores
/// (``MigrationManager/runStages(source:destination:fused:)``), and the manager keeps them
/// with its run; a step run alone has neither.
struct FusedNeighbours: Sendable {
    var upstream: FusedLink?
    var downstream: FusedLink?

    /// Whether the step runs in a fused pass.
    var isFused: Bool { upstream != nil || downstream != nil }
}

extension MigrationManager {
    /// The step's neighbours in a fused pass, while a run is on; none otherwise.
    var fusedNeighbours: FusedNeighbours { withRun(\.fused) ?? FusedNeighbours() }

    /// Ends a batch of `mapping`: saved, or, for a mapping whose instances the next fused
    /// step takes, handed over to it.
    func finishBatch(of mapping: EntityMapping) async throws {
        if let link = fusedNeighbours.downstream, link.hands(mapping.name) {
            try await handOver(mapping, to: link)
            // Once the batch's own references are gone: what the next step still holds stays.
            forgetBatchObjects()
        } else {
            try await flushBatch()
        }
    }

    /// Hands the batch's destination instances of `mapping` to the next step instead of
    /// saving them: each takes the key a save would have given it (its source's plus the
    /// mapping's offset) and the foreign keys it would have been saved with, and is
    /// validated as the intermediate store's validation would have.
    ///
    /// - Throws: ``StepsNotFusable`` when the batch is not one new destination per source
    ///   and nothing else (a policy that made a second destination, or changed other objects).
    private func handOver(_ mapping: EntityMapping, to link: FusedLink) async throws {
        let context = destinationContext
        guard
            let (pending, stages, associations) = updateRun({ run in
                (run.batch.startNext(), run.relationshipStages, run.associations)
            })
        else { return }
        // The mappings created before this one as the step alone runs them (a fused step
        // makes its SQL instances first): a foreign key is checked against them alike.
        let created = Set(mappingModel.entityMappings.prefix { $0.name != mapping.name }.map(\.name))
        guard context.updatedObjects.isEmpty, context.deletedObjects.isEmpty, context.insertedObjects.count == pending.count else {
            throw StepsNotFusable(reason: "the policy of \(mapping.name) changed objects besides one new destination per source")
        }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(pending.count)
        var issues: [ValidationError.Issue] = []
        for pair in pending {
            guard pair.mapping == mapping.name, pair.destination.entity.name == mapping.destinationEntityName,
                case .temporary(let temporary) = pair.destination.objectID.key, pair.destination.isInserted,
                let source = pair.source.objectID.primaryKey,
                let key = associations.claimIdentity(mapping: mapping.name, source: source, destinationRoot: pair.destination.objectID.rootEntityName)
            else {
                throw StepsNotFusable(
                    reason: "\(mapping.name) associated a destination that is not the one new \(mapping.destinationEntityName ?? "") of its source"
                )
            }
            // The key a save would have given it: the next step finds its source key there.
            temporary.noteSaved(as: key)
            if case .foreignKeys(let lookups)? = stages[mapping.name], !lookups.isEmpty {
                writeForeignKeys(lookups, of: pair.destination, from: pair.source, associations: associations, created: created)
            }
            issues += ManagedObjectContext.validate(pair.destination)
            objects.append(pair.destination)
        }
        if !issues.isEmpty {
            throw MigrationValidation(model: destinationModel, batchSize: configuration.batchSize, logger: logger, file: mappingModel.file).failure(
                issues
            )
        }
        try await link.send(objects, mapping: mapping.name)
    }

    /// In a fused pass, the stages this step runs must be the ones the plan fused: found
    /// again now, with the stores' keys, they may differ (source keys too large to track
    /// as identity pairs make relationships one by one).
    func checkFusedStages(_ stages: [String: (instances: InstanceStage?, relationships: RelationshipStage)]) throws {
        let neighbours = fusedNeighbours
        guard neighbours.isFused else { return }
        for (name, stage) in stages {
            if case .perInstance(let reason) = stage.relationships {
                throw StepsNotFusable(reason: "\(name) sets its relationships one by one (\(reason))")
            }
        }
        let carried = (neighbours.downstream?.carried.map(\.upstream) ?? []) + (neighbours.upstream?.carried.map(\.downstream) ?? [])
        for name in carried {
            guard case .perInstance? = stages[name]?.instances else {
                throw StepsNotFusable(reason: "\(name) makes its instances in SQL, not one by one")
            }
        }
    }

    /// Says the next step has every instance of `mapping`, once it is sure each source
    /// row gave one: the keys and counts it was told rely on that.
    func endHandingOver(_ mapping: EntityMapping, to link: FusedLink, associations: AssociationIndex, sourceRows: [String: Int]) throws {
        guard !destinationContext.hasChanges, withRun(\.batch.pending.isEmpty) ?? true else {
            throw StepsNotFusable(reason: "the policy of \(mapping.name) made objects after its last source instance")
        }
        guard associations.coversEveryRow(of: mapping.name, sourceRows: sourceRows[mapping.name] ?? 0) else {
            throw StepsNotFusable(reason: "\(mapping.name) made no destination for some source instances")
        }
        link.end(mapping: mapping.name)
    }

    /// Tells the next step through `link` where the instances this step hands over have
    /// their keys. The output is read by the next step from then on (an attached SQLite
    /// file, read as unchanging): it is not written again, so the batches left record no
    /// checkpoint, and the next run takes where the step got from the next step's output.
    func announceKeys(to link: FusedLink, associations: AssociationIndex, sourceRows: [String: Int]) {
        link.announce(readyKeys(associations: associations, sourceRows: sourceRows))
        updateRun { $0.checkpoint = nil }
    }

    /// Where the instances this step hands over have their keys, for the next step.
    private func readyKeys(associations: AssociationIndex, sourceRows: [String: Int]) -> FusedLink.Ready {
        var keys: [String: FusedLink.Ready.Keys] = [:]
        for carried in fusedNeighbours.downstream?.carried ?? [] {
            guard let mappingKeys = associations.keys(of: carried.upstream) else { continue }
            keys[carried.upstream] = .init(largest: mappingKeys.range?.upperBound ?? mappingKeys.offset, rows: sourceRows[carried.upstream] ?? 0)
        }
        return FusedLink.Ready(keys: keys)
    }

    /// The instances of each mapping that takes them from the step before, for progress.
    func carriedRows(_ sourceRows: [String: Int]) -> [String: Int] {
        guard let link = fusedNeighbours.upstream else { return [:] }
        var rows: [String: Int] = [:]
        for carried in link.carried { rows[carried.downstream] = sourceRows[carried.downstream] }
        return rows
    }
}
