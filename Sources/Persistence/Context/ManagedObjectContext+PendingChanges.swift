import Foundation

/// How a fetch sees the context's unsaved changes, as Core Data's fetches do by default: the
/// store answers for rows the context has not changed, ``PredicateEvaluator`` for the
/// objects it inserted or changed, and the two are merged in the request's order.
extension ManagedObjectContext {
    /// What a fetch of one entity must take from memory rather than from the store.
    struct PendingChanges {
        /// Inserted and changed objects of the entity (not deleted ones), to match in memory.
        var candidates: [ManagedObject]
        /// Saved rows whose stored values no longer tell: changed or deleted in the context.
        var stale: Set<ObjectID>
    }

    /// The unsaved changes a fetch of `layout`'s entity must see; `nil` when there are none,
    /// so the store alone answers.
    func pendingChanges(for layout: EntityLayout, includesSubentities: Bool) -> PendingChanges? {
        let root = layout.table.rootEntityName
        let (candidates, stale) = state.withLock { state -> ([ManagedObject], Set<ObjectID>) in
            guard !state.inserted.isEmpty || !state.updated.isEmpty || !state.deleted.isEmpty else { return ([], []) }
            let updated = state.updated.filter { $0.rootEntityName == root }
            let inserted = state.inserted.filter { $0.rootEntityName == root }
            let candidates = (inserted + updated).compactMap { state.registered[$0] }
            return (candidates, updated.union(state.deleted.keys.filter { $0.rootEntityName == root }))
        }
        let entity = layout.entity
        let matching = candidates.filter { candidate in
            !candidate.isDeleted
                && (includesSubentities ? model.entity(candidate.entity, isKindOf: entity) : candidate.entity.name == entity.name)
        }
        guard !matching.isEmpty || !stale.isEmpty else { return nil }
        return PendingChanges(candidates: matching, stale: stale)
    }

    /// The candidates that match `predicate` on their current values.
    func unsavedMatches(_ pending: PendingChanges, predicate: Predicate?) async throws -> [ManagedObject] {
        guard let predicate else { return pending.candidates }
        let evaluator = PredicateEvaluator(context: self)
        var matches: [ManagedObject] = []
        for candidate in pending.candidates where try await evaluator.matches(candidate, predicate) {
            matches.append(candidate)
        }
        return matches
    }

    /// The store's rows (in the request's order, from its first row) with the stale ones
    /// left out and the unsaved matches put in their places, then the request's window.
    func merge(
        _ stored: [ManagedObject],
        with pending: PendingChanges,
        predicate: Predicate?,
        request: FetchRequest
    ) async throws -> [ManagedObject] {
        let order = FetchOrder(descriptors: request.sortDescriptors, evaluator: PredicateEvaluator(context: self))
        var saved: [FetchOrder.Keyed] = []
        for object in stored where !pending.stale.contains(object.objectID) {
            saved.append(try await order.keyed(object))
        }
        var unsaved: [FetchOrder.Keyed] = []
        for object in try await unsavedMatches(pending, predicate: predicate) {
            unsaved.append(try await order.keyed(object))
        }
        unsaved.sort(by: order.precedes)
        // The store's order is kept as it is; only where the unsaved objects go is decided here.
        var merged: [ManagedObject] = []
        merged.reserveCapacity(saved.count + unsaved.count)
        var next = unsaved.startIndex
        for row in saved {
            while next < unsaved.endIndex, order.precedes(unsaved[next], row) {
                merged.append(unsaved[next].object)
                next += 1
            }
            merged.append(row.object)
        }
        merged += unsaved[next...].map(\.object)
        let window = merged.dropFirst(request.fetchOffset)
        return Array(request.fetchLimit.map { window.prefix($0) } ?? window)
    }
}

/// A fetch's sort descriptors applied in memory, as the SQL `ORDER BY` the compiler writes:
/// nil first in ascending order, strings by code point (folded when case-insensitive), then
/// the primary key; unsaved objects, which have none yet, after saved ones in insertion order.
struct FetchOrder {
    let descriptors: [FetchRequest.SortDescriptor]
    let evaluator: PredicateEvaluator

    struct Keyed {
        let object: ManagedObject
        let keys: [PredicateEvaluator.Value]
        let id: ObjectID
    }

    func keyed(_ object: ManagedObject) async throws -> Keyed {
        var keys: [PredicateEvaluator.Value] = []
        for descriptor in descriptors {
            let path = descriptor.key.split(separator: ".").map(String.init)
            keys.append(try await evaluator.value(of: .keyPath(path), on: object))
        }
        return Keyed(object: object, keys: keys, id: object.objectID)
    }

    func precedes(_ a: Keyed, _ b: Keyed) -> Bool {
        for (index, descriptor) in descriptors.enumerated() {
            let (l, r) = (a.keys[index], b.keys[index])
            let result: ComparisonResult
            switch (PredicateEvaluator.isNull(l), PredicateEvaluator.isNull(r)) {
            case (true, true): result = .orderedSame
            case (true, false): result = .orderedAscending
            case (false, true): result = .orderedDescending
            case (false, false): result = PredicateEvaluator.order(l, r, flags: descriptor.caseInsensitive ? 1 : 0) ?? .orderedSame
            }
            if result != .orderedSame { return (result == .orderedAscending) == descriptor.ascending }
        }
        switch (a.id.primaryKey, b.id.primaryKey) {
        case let (l?, r?): return l < r
        case (_?, nil): return true
        case (nil, _?): return false
        case (nil, nil): return a.id.temporaryNumber < b.id.temporaryNumber
        }
    }
}
