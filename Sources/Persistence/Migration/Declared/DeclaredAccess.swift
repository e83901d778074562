import Synchronization

/// What the hooks of an entity mapping with declared values (``DeclaredValues``) may touch of
/// the objects they are given, and what they touched besides: kept by the layout of those
/// objects (``EntityLayout/declared``), so an undeclared key is noticed where it is used.
///
/// The source side also keeps the batch: its sources' keys in order, what each one's
/// destination starts with, and the destination each one got. The default
/// ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)`` makes the
/// destination here (``makeDestination(for:)``) instead of evaluating the mapping's
/// expressions, which the step's SQL does; ``MigrationManager/associate(sourceInstance:withDestinationInstance:for:)``
/// records the pair here, by the source's place in the batch, not in the manager's tables
/// keyed by object ID.
final class DeclaredAccess: Sendable {
    enum Side: Sendable {
        case source
        case destination
    }

    let side: Side
    /// Each declared key's bit, by its slot in the objects' layout; `nil` for the others.
    private let bits: [Int?]
    /// The entity mapping and the entity whose objects these are, for messages.
    let mapping: String
    let entityName: String
    /// The source side's: the destinations' layout.
    let destinationLayout: EntityLayout?
    private let state = Mutex(State())
    /// Once the mapping's instances are written: every key is noted then.
    private let closed = Atomic(false)

    private struct State {
        var firstUndeclared: String?
        var firstMisfit: Misfit?
        var nextTemporaryID: UInt64 = 1
        /// The batch's source keys, ascending, and by the same place what each one's
        /// destination starts with (its slots) and the destination it got.
        var keys: [Int64] = []
        var starting: [[AttributeValue]] = []
        var destinations: [ManagedObject?] = []
    }

    /// A pair the batch cannot hold: its first instance, for the error.
    enum Misfit: Sendable {
        /// A destination `super.createDestinationInstances` did not make.
        case foreignDestination(entityName: String)
        /// A second destination for one source.
        case secondDestination
        /// A source outside the batch, kept by a hook from an earlier one.
        case sourceOutsideBatch
        /// A pair of another entity mapping.
        case otherMapping(String)
    }

    /// `keys`: the declared keys, in bit order; `slots`: each attribute's slot in the
    /// objects' layout.
    init(side: Side, keys: [String], slots: [String: Int], mapping: String, entityName: String, destinationLayout: EntityLayout? = nil) {
        self.side = side
        var bits = [Int?](repeating: nil, count: (slots.values.max() ?? -1) + 1)
        for (bit, key) in keys.enumerated() {
            if let slot = slots[key] { bits[slot] = bit }
        }
        self.bits = bits
        self.mapping = mapping
        self.entityName = entityName
        self.destinationLayout = destinationLayout
    }

    /// The bit of the declared key in `slot` (`nil`: no slot), or `nil` after noting `key`
    /// as undeclared (or used once the mapping is written).
    func bit(of key: String, slot: Int?) -> Int? {
        if let slot, slot < bits.count, let bit = bits[slot], !closed.load(ordering: .acquiring) { return bit }
        noteUndeclared(key)
        return nil
    }

    /// Notes a use of `key` that no declaration allows (a relationship).
    func noteUndeclared(_ key: String) {
        state.withLock { if $0.firstUndeclared == nil { $0.firstUndeclared = key } }
    }

    /// The first undeclared key used since the last call, cleared.
    func takeUndeclared() -> String? {
        state.withLock { state in
            defer { state.firstUndeclared = nil }
            return state.firstUndeclared
        }
    }

    /// From now on every key is noted: the mapping's instances are written, and a value
    /// read or set later (a policy's `endInstanceCreation` with objects it kept) would be
    /// wrong or lost.
    func close() {
        closed.store(true, ordering: .releasing)
    }

    /// Whether ``close()`` was called: a key noted since was used too late.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    // MARK: The batch (source side)

    /// Begins a batch of sources with `keys` (ascending), their destinations starting with
    /// `starting`, by the same place.
    func beginBatch(keys: [Int64], starting: [[AttributeValue]]) {
        state.withLock { state in
            state.keys = keys
            state.starting = starting
            state.destinations = Array(repeating: nil, count: keys.count)
            state.firstMisfit = nil
        }
    }

    /// A destination for `source`: detached, its declared keys at what the mapping's
    /// expressions make of `source`, none of them set yet.
    func makeDestination(for source: ManagedObject) -> ManagedObject? {
        guard let layout = destinationLayout, let key = source.objectID.primaryKey else { return nil }
        let made: ([AttributeValue], UInt64)? = state.withLock { state in
            guard let place = Self.place(of: key, in: state.keys) else { return nil }
            defer { state.nextTemporaryID += 1 }
            return (state.starting[place], state.nextTemporaryID)
        }
        guard let (values, number) = made else { return nil }
        let id = ObjectID(entityName: layout.entity.name, rootEntityName: layout.table.rootEntityName, key: .temporary(.init(number)))
        return ManagedObject(
            layout: layout,
            state: .init(
                objectID: id,
                values: PropertyValues(slots: layout.attributeSlots, values: values),
                toOne: layout.noDestinations,
                version: 0,
                isInserted: false,
                context: nil
            )
        )
    }

    /// Records that `destination` was made from `source` by the entity mapping `mapping`.
    func associate(_ source: ManagedObject, _ destination: ManagedObject, mapping: String) {
        state.withLock { state in
            guard mapping == self.mapping else { return Self.note(.otherMapping(mapping), in: &state) }
            guard destination.layout.declared?.side == .destination, destination.layout === destinationLayout else {
                return Self.note(.foreignDestination(entityName: destination.entity.name), in: &state)
            }
            guard let key = source.objectID.primaryKey, let place = Self.place(of: key, in: state.keys) else {
                return Self.note(.sourceOutsideBatch, in: &state)
            }
            guard state.destinations[place] == nil else { return Self.note(.secondDestination, in: &state) }
            state.destinations[place] = destination
        }
    }

    /// The destinations made so far from `sources`, in their order; `nil` when one of them
    /// is not of this batch.
    func destinations(of sources: [ManagedObject]) -> [ManagedObject]? {
        state.withLock { state in
            var found: [ManagedObject] = []
            for source in sources {
                guard source.layout.declared === self, let key = source.objectID.primaryKey,
                    let place = Self.place(of: key, in: state.keys)
                else { return nil }
                if let destination = state.destinations[place] { found.append(destination) }
            }
            return found
        }
    }

    /// Ends the batch: each source's key and destination (`nil`: it got none), and the first
    /// pair it could not hold.
    func endBatch() -> (keys: [Int64], destinations: [ManagedObject?], misfit: Misfit?) {
        state.withLock { state in
            defer {
                state.keys = []
                state.starting = []
                state.destinations = []
                state.firstMisfit = nil
            }
            return (state.keys, state.destinations, state.firstMisfit)
        }
    }

    private static func note(_ misfit: Misfit, in state: inout State) {
        if state.firstMisfit == nil { state.firstMisfit = misfit }
    }

    /// Where `key` is in the ascending `keys`.
    private static func place(of key: Int64, in keys: [Int64]) -> Int? {
        var (low, high) = (0, keys.count)
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key ? low : nil
    }
}
