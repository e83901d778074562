import Foundation

extension MigrationManager {
    /// A batch ready to be written (``prepareBatchSave()``): the keys its identity pairs
    /// take, the association rows of the others, and the checkpoint that counts it, all
    /// written in the objects' transaction by `alsoWriting`.
    struct BatchSave: Sendable {
        struct AssociationRow: Sendable {
            let mapping: String
            let source: Int64
            let destination: ObjectID
        }

        let assignedKeys: [ObjectID: Int64]
        let associationRows: [AssociationRow]
        let associations: AssociationIndex
        let checkpoint: StepCheckpoint?
        let alsoWriting: ManagedObjectContext.AlsoWriting
        /// Whether there is anything to write: objects, association rows or a checkpoint.
        let writesAnything: Bool
    }

    /// A batch of one entity mapping's instances that its policy has made.
    struct MadeBatch {
        /// The source key of its last instance, where a checkpoint says the mapping got to.
        let lastSourceKey: Int64?
        let count: Int
    }

    /// Makes a mapping's instances batch by batch with `makeBatch` (the next batch's policy
    /// calls; `nil` once no source instance is left) and saves each, telling `committed`
    /// of each batch once its transaction has committed (with the mapping's instances
    /// done so far). Returns the instances done, `done` of them before.
    ///
    /// `pipelined`: batch k + 1 is made while batch k is written, so the store's writer and
    /// the policy calls use both cores (on PostgreSQL a lone step's client otherwise waits
    /// for the server more than half of its time). Batch k's objects count as saved once
    /// its write begins (``ManagedObjectContext/beginSave(assignedKeys:insertsInBulk:)``)
    /// and are forgotten then unless a policy holds them; a change a policy makes to one
    /// of those meanwhile goes into batch k + 1's save. Batch k + 1 is written only after
    /// batch k has committed and its keys are known, in the same order as without the
    /// pipeline, so every batch's transaction holds the same rows and checkpoint.
    /// Only for a mapping whose policy and manager read no store beyond the instances
    /// they are given (``EntityMigrationPolicy/fetchesFromStores``): a read of the
    /// destination would miss the batch being written.
    func createBatches(
        of mapping: EntityMapping,
        pipelined: Bool,
        done: Int,
        makeBatch: () async throws -> MadeBatch?,
        committed: (_ count: Int, _ done: Int) throws -> Void
    ) async throws -> Int {
        var done = done
        guard pipelined else {
            while let batch = try await makeBatch() {
                if let last = batch.lastSourceKey { checkpointBatch(of: mapping.name, last: last, done: done + batch.count) }
                try await finishBatch(of: mapping)
                done += batch.count
                try committed(batch.count, done)
                try await configuration.throttle?.pace(rows: batch.count)
            }
            return done
        }
        let context = destinationContext
        return try await withThrowingTaskGroup(of: SaveResult.self) { group in
            // The batch being written, if one is.
            var writing: (batch: BatchSave, save: ManagedObjectContext.SaveInFlight?, count: Int)?
            while true {
                let made = try await makeBatch()
                if let (batch, save, count) = writing {
                    let result = try await writingBatch { try await group.next() ?? SaveResult() }
                    if let save { context.endSave(save, result: result) }
                    batchCommitted(batch)
                    writing = nil
                    done += count
                    try committed(count, done)
                    try await configuration.throttle?.pace(rows: count)
                }
                guard let made else { return done }
                if let last = made.lastSourceKey { checkpointBatch(of: mapping.name, last: last, done: done + made.count) }
                let clock = partClock
                guard let batch = try await clock.time(.prepare, { try prepareBatchSave() }) else { return done }
                // The save's plan counts as writing, as it does where a batch is saved whole.
                let save = try await clock.time(.write) {
                    batch.writesAnything ? try context.beginSave(assignedKeys: batch.assignedKeys, insertsInBulk: true) : nil
                }
                // The batch's objects are the save's now: forgotten here unless a policy holds them.
                forgetBatchObjects()
                if let save {
                    group.addTask { try await clock.time(.write) { try await context.write(save, alsoWriting: batch.alsoWriting) } }
                } else {
                    group.addTask { SaveResult() }
                }
                writing = (batch, save, made.count)
            }
        }
    }

    /// Whether ``createBatches(of:pipelined:done:makeBatch:committed:)`` makes a batch of
    /// `mapping` while the one before is written: when neither its policy nor the manager
    /// reads the stores. The stages ask it of a step that runs alone only: in a fused pass
    /// the two steps already keep both cores as busy as the overlap would (measured at
    /// 300 000 books: the fused pass pipelined took 1.01× the time on SQLite, 1.02× on
    /// PostgreSQL, and 1.05–1.06× the CPU, where a lone step took 0.90× and 0.92×).
    func pipelinesBatches(of mapping: EntityMapping, policy: EntityMigrationPolicy) -> Bool {
        !type(of: policy).fetchesFromStores && !type(of: self).fetchesFromStores
    }
}
