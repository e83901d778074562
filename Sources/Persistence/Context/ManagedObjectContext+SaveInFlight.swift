import Foundation

extension ManagedObjectContext {
    /// A save the context already counts as done while its rows are written: a migration
    /// writes batch k so while it makes batch k + 1 (see ``beginSave(assignedKeys:insertsInBulk:)``).
    struct SaveInFlight: Sendable {
        let plan: SavePlan
        let started: ContinuousClock.Instant
    }

    /// Plans an unvalidated save of every pending change and counts its objects as saved
    /// at once (``markSaved(_:)``): changes made from now on are changes after
    /// this save, planned by the next one. Write it with ``write(_:alsoWriting:)`` (which
    /// touches no object, so the context may be used meanwhile), then ``endSave(_:result:)``
    /// before planning the next save, which may point at the rows this one inserts.
    ///
    /// Only for a migration's batches: when the write fails the objects are not as they
    /// were (they count as saved), and the migration that owns the context stops. Inserted
    /// objects keep their temporary IDs until ``endSave(_:result:)``.
    ///
    /// ```swift
    /// let batch = try context.beginSave(assignedKeys: keys, insertsInBulk: true)
    /// context.forgetObjectsNotHeldElsewhere()
    /// async let written = context.write(batch, alsoWriting: nil)
    /// makeNextBatch()
    /// context.endSave(batch, result: try await written)
    /// ```
    func beginSave(assignedKeys: [ObjectID: Int64], insertsInBulk: Bool) throws -> SaveInFlight {
        var (planned, _) = try makePlan(validating: false)
        planned.assignedKeys = assignedKeys
        planned.insertsInBulk = insertsInBulk
        planned.checksDestinations = false
        if !planned.isEmpty { markSaved(planned) }
        state.withLock { $0.savesInFlight += 1 }
        return SaveInFlight(plan: planned, started: ContinuousClock.now)
    }

    /// Writes a save begun with ``beginSave(assignedKeys:insertsInBulk:)`` and `alsoWriting`
    /// in one transaction.
    ///
    /// - Throws: ``StoreError`` when the database refuses the write (rolled back; a broken
    ///   uniqueness constraint is not worked out into a ``ConstraintConflictError``, whose
    ///   objects the context no longer holds), or what `alsoWriting` throws.
    func write(_ save: SaveInFlight, alsoWriting: AlsoWriting?) async throws -> SaveResult {
        do {
            return try await write(save.plan, alsoWriting: alsoWriting)
        } catch let error as DatabaseError {
            throw StoreError(.database, "the save failed and was rolled back", store: store.url.description, underlying: error)
        }
    }

    /// Gives the objects of a save begun with ``beginSave(assignedKeys:insertsInBulk:)``
    /// that are still registered the keys its write gave them, and registers them under
    /// those: the changes made meanwhile are named so too.
    func endSave(_ save: SaveInFlight, result: SaveResult) {
        state.withLock { $0.savesInFlight -= 1 }
        guard !save.plan.isEmpty else { return }
        adopt(result, registeringSaved: true)
        logSaved(save.plan, result: result, since: save.started)
    }
}
