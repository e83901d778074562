import Synchronization

/// What the hooks of an entity mapping with declared values (``DeclaredValues``) may touch of
/// the objects they are given, and what they touched besides: kept by the layout of those
/// objects (``EntityLayout/declared``), so an undeclared key is noticed where it is used.
///
/// The source side also makes the destinations (``makeDestination(for:)``): the default
/// ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)`` asks it instead
/// of evaluating the mapping's expressions, which the step's SQL does.
final class DeclaredAccess: Sendable {
    enum Side: Sendable {
        case source
        case destination
    }

    let side: Side
    /// The keys the hooks may use on this side.
    let keys: Set<String>
    /// The entity mapping and the entity whose objects these are, for messages.
    let mapping: String
    let entityName: String
    /// The source side's: the destinations' layout and, per source key, the values a new
    /// destination starts with (what the mapping's expressions make) in its slots.
    let destinationLayout: EntityLayout?
    private let state = Mutex(State())

    private struct State {
        var firstUndeclared: String?
        var startingValues: [Int64: [AttributeValue]] = [:]
        var nextTemporaryID: UInt64 = 1
    }

    init(side: Side, keys: Set<String>, mapping: String, entityName: String, destinationLayout: EntityLayout? = nil) {
        self.side = side
        self.keys = keys
        self.mapping = mapping
        self.entityName = entityName
        self.destinationLayout = destinationLayout
    }

    /// Whether `key` is declared; notes the first key that is not.
    func allows(_ key: String) -> Bool {
        if keys.contains(key) { return true }
        state.withLock { if $0.firstUndeclared == nil { $0.firstUndeclared = key } }
        return false
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

    /// Sets what the destinations of the next sources start with, by source key.
    func setStartingValues(_ values: [Int64: [AttributeValue]]) {
        state.withLock { $0.startingValues = values }
    }

    /// A destination for `source`: detached, its declared keys at what the mapping's
    /// expressions make of `source`, no change noted yet (a set value is one).
    func makeDestination(for source: ManagedObject) -> ManagedObject? {
        guard let layout = destinationLayout, let key = source.objectID.primaryKey else { return nil }
        let (values, number) = state.withLock { state in
            defer { state.nextTemporaryID += 1 }
            return (state.startingValues[key], state.nextTemporaryID)
        }
        var slots = PropertyValues(slots: layout.attributeSlots, values: [AttributeValue](repeating: .null, count: layout.attributesBySlot.count))
        if let values { slots.values = values }
        let id = ObjectID(entityName: layout.entity.name, rootEntityName: layout.table.rootEntityName, key: .temporary(.init(number)))
        return ManagedObject(
            layout: layout,
            state: .init(objectID: id, values: slots, toOne: layout.noDestinations, version: 0, isInserted: false, context: nil)
        )
    }
}
