/// A context's unsaved changes, copied out so the store's writer thread can apply them.
struct SavePlan: Sendable {
    struct RowWrite: Sendable {
        let id: ObjectID
        let entityName: String
        /// Attribute columns and their stored values.
        let values: [(column: String, value: DatabaseValue)]
        /// Foreign-key columns and the object they point at (maybe not saved yet).
        let foreignKeys: [(column: String, relationship: String, destination: ObjectID?)]
        /// `Z_OPT` as read, for updates.
        let expectedVersion: Int64
    }

    struct CountCheck: Sendable {
        let id: ObjectID
        let entityName: String
        let relationship: String
    }

    var inserts: [RowWrite] = []
    var updates: [RowWrite] = []
    var deletes: [ObjectID] = []
    var joinChanges: [(change: ManagedObjectContext.JoinChange, add: Bool)] = []
    /// Ordered to-many relationships given a whole new order, written after the pairs.
    var reorders: [OrderedMembers] = []
    /// When each written object's to-one was last set: objects put into an ordered to-many
    /// through its inverse take their places at its end in that order, inserted or not.
    var toOneChangeOrder: [ObjectID: UInt64] = [:]
    var countChecks: [CountCheck] = []
    /// Keys chosen by the caller for some inserted objects (a migration's identity keys);
    /// the others get keys from `Z_PRIMARYKEY`.
    var assignedKeys: [ObjectID: Int64] = [:]
    /// Insert rows in bulk, a statement per entity rather than per row: for a migration's
    /// batches, whose rows have no one-to-one partners to keep in step.
    var insertsInBulk = false
    /// Check, in the save's transaction, that every saved row a foreign key or a join row
    /// is to point at still exists, and hold it until the commit (see
    /// ``SaveExecutor/holdDestinations(of:)``). Off for unvalidated saves: those are a
    /// migration's batches, which point at rows of their own output, which nothing else writes.
    var checksDestinations = true

    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joinChanges.isEmpty && reorders.isEmpty }
}

/// What a save did, for bringing the context's objects up to date after the commit.
struct SaveResult: Sendable {
    /// Temporary ID → primary key of every inserted object.
    var primaryKeys: [ObjectID: Int64] = [:]
    /// Every deleted row, including those deleted by cascade rules.
    var deleted: Set<ObjectID> = []
}
