extension MigrationManager {
    /// One run of ``migrateStore(from:to:)``: its contexts and association index, how each
    /// entity mapping runs, where stage 1 is, and the batch being made.
    struct Run {
        let sourceContext: ManagedObjectContext
        let destinationContext: ManagedObjectContext
        let associations: AssociationIndex
        /// The step's neighbours where it runs in a fused pass; none where it runs alone.
        let fused: FusedNeighbours
        /// How each entity mapping's instances are created (see ``InstanceStage``).
        var instanceStages: [String: InstanceStage] = [:]
        /// How each entity mapping's relationships are set (see ``RelationshipStage``).
        var relationshipStages: [String: RelationshipStage] = [:]
        /// Entity mappings whose instances are all created: their identity pairs are final.
        var createdMappings: Set<String> = []
        var currentEntityMapping: EntityMapping?
        var batch = Batch()
        /// Where the step is, to be recorded with the next write; `nil` when the step is
        /// not checkpointed (see ``StepCheckpoint``).
        var checkpoint: StepCheckpoint?
        /// The checkpoint the output holds.
        var checkpointWritten: StepCheckpoint?
    }

    /// The batch being made: the associations made since the last save (with the same pairs
    /// by entity mapping and source or destination, for look-ups), and what a relationship
    /// batch looked up ahead. ``startNext()`` is the one place a batch ends and the next begins.
    struct Batch {
        var pending: [Pending] = []
        var pendingBySource: [String: [ObjectID: [ManagedObject]]] = [:]
        var pendingByDestination: [String: [ObjectID: [ManagedObject]]] = [:]
        /// The source of each destination of the current relationship batch.
        var sources: [ObjectID: ManagedObject] = [:]
        /// Destinations looked up ahead for the current relationship batch, by entity
        /// mapping and source key (``prefetchRelationships(of:entity:)``).
        var prefetchedDestinations: [String: [Int64: [ManagedObject]]] = [:]

        mutating func associate(_ pair: Pending) {
            pending.append(pair)
            pendingBySource[pair.mapping, default: [:]][pair.source.objectID, default: []].append(pair.destination)
            pendingByDestination[pair.mapping, default: [:]][pair.destination.objectID, default: []].append(pair.source)
        }

        /// Ends this batch, returning its associations to save, and begins the next one,
        /// empty but with this one's capacity: it fills as far.
        mutating func startNext() -> [Pending] {
            defer {
                pending.removeAll(keepingCapacity: true)
                for mapping in Array(pendingBySource.keys) { pendingBySource[mapping]?.removeAll(keepingCapacity: true) }
                for mapping in Array(pendingByDestination.keys) { pendingByDestination[mapping]?.removeAll(keepingCapacity: true) }
                sources = [:]
                prefetchedDestinations = [:]
            }
            return pending
        }
    }

    struct State {
        /// The run while ``migrateStore(from:to:)`` runs, made whole when it starts and
        /// dropped whole when it ends, so no field outlives it or is reset on its own;
        /// `nil` between runs.
        var run: Run?
        /// The step's fraction done: Core Data's `migrationProgress`, kept after the run.
        var progress: Double = 0
        var progressHandler: (@Sendable (MigrationProgress) -> Void)?
    }

    /// A value of the run, if one is on, read where it is (the run is not copied).
    ///
    /// A function, not a key path: applied to `run?` a key path read a copy of the whole
    /// run (every field retained and released), a few per cent of a streamed step.
    func withRun<T: Sendable>(_ value: (Run) -> T) -> T? {
        updateRun { value($0) }
    }

    /// Changes the run in place, if one is on.
    @discardableResult
    func updateRun<T: Sendable>(_ body: (inout Run) throws -> T) rethrows -> T? {
        try state.withLock { state in
            guard state.run != nil else { return nil }
            // Through the unwrapped storage itself: the run is changed where it is, not copied.
            return try body(&state.run!)
        }
    }
}
