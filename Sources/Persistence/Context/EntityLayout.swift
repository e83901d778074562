/// An entity's properties resolved once per store: inherited ones included, by name. A
/// class, so that looking one up per object costs a reference, not a copy of every table.
final class EntityLayout: Sendable {
    let entity: EntityDescription
    let table: EntityTable
    let attributes: [String: AttributeDescription]
    let relationships: [String: RelationshipDescription]
    /// Attributes in a stable order, for inserts.
    let storedAttributes: [AttributeDescription]
    let toOneRelationships: [RelationshipDescription]
    /// Where each attribute and each to-one relationship (stored and transient) is in an
    /// object's values.
    let attributeSlots: PropertySlots
    let toOneSlots: PropertySlots
    /// Each attribute by its slot.
    let attributesBySlot: [AttributeDescription]
    /// The slots of the binary attributes Core Data may keep outside the store
    /// (``PersistentStore/externalBinaryStorage``).
    let externallyStoredSlots: Set<Int>
    /// What a new object starts with: every attribute at its default, no to-one
    /// destinations, every key changed. Copied per object (copy on write), not rebuilt.
    let defaultValues: PropertyValues<AttributeValue>
    let noDestinations: PropertyValues<ObjectID?>
    let propertyKeys: Set<String>
    let attributeKeys: Set<String>
    /// The columns a save writes for every stored attribute and to-one relationship, in
    /// order, with the slot each value is in.
    let attributeColumns: [(attribute: String, column: String, type: AttributeType, slot: Int)]
    let foreignKeyColumns: [(relationship: String, column: String, slot: Int)]
    /// The to-one relationships whose destination's `Z_ENT` the store keeps beside the key
    /// (``EntityTable/entityTypeColumn(for:)``), with the slot of each: a save writes it
    /// with the key.
    let entityTypeColumns: [(relationship: String, column: String, slot: Int)]
    /// What validation checks, in the order it reports: the stored attributes by name with
    /// their slots, and the required to-one relationships with theirs. Worked out once per
    /// entity, not sorted and looked up by name per object.
    let validatedAttributes: [(attribute: AttributeDescription, slot: Int)]
    let requiredToOneSlots: [(relationship: String, slot: Int)]
    /// For the objects a migration hook with declared values is given: the keys it may use
    /// (``DeclaredAccess``); `nil` for every other object.
    let declared: DeclaredAccess?

    init(entity: EntityDescription, schema: StoreSchema, declared: DeclaredAccess? = nil) {
        self.declared = declared
        let model = schema.model
        self.entity = entity
        self.table = schema.table(for: entity.name)!
        let allAttributes = model.attributes(of: entity)
        let allRelationships = model.relationships(of: entity)
        self.attributes = Dictionary(allAttributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.relationships = Dictionary(allRelationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.storedAttributes = allAttributes.filter { !$0.isTransient }
        let toOneRelationships = allRelationships.filter { !$0.isToMany && !$0.isTransient }
        self.toOneRelationships = toOneRelationships
        // One slot per name: the first of the inherited-first lists, as `attributes` keeps.
        var named = Set<String>()
        let attributesBySlot = allAttributes.filter { named.insert($0.name).inserted }
        named = []
        // Transient to-one relationships too: they are set like the others, and a save moves
        // them to their destination's permanent ID as it does the others.
        let toOneBySlot = allRelationships.filter { !$0.isToMany && named.insert($0.name).inserted }
        self.attributesBySlot = attributesBySlot
        self.externallyStoredSlots = Set(
            attributesBySlot.indices.filter { attributesBySlot[$0].allowsExternalBinaryDataStorage && !attributesBySlot[$0].isTransient }
        )
        let attributeSlots = PropertySlots(names: attributesBySlot.map(\.name))
        let toOneSlots = PropertySlots(names: toOneBySlot.map(\.name))
        self.attributeSlots = attributeSlots
        self.toOneSlots = toOneSlots
        self.defaultValues = PropertyValues(slots: attributeSlots, values: attributesBySlot.map { $0.defaultValue ?? .null })
        self.noDestinations = PropertyValues(slots: toOneSlots, values: Array(repeating: nil, count: toOneBySlot.count))
        self.propertyKeys = Set(attributes.keys).union(relationships.keys)
        self.attributeKeys = Set(attributes.keys)
        let table = self.table
        self.attributeColumns = self.storedAttributes.compactMap { attribute in
            guard let column = table.column(for: attribute.name), let slot = attributeSlots.index[attribute.name] else { return nil }
            return (attribute.name, column.name, attribute.type, slot)
        }
        self.foreignKeyColumns = self.toOneRelationships.compactMap { relationship in
            guard let column = table.column(for: relationship.name), let slot = toOneSlots.index[relationship.name] else { return nil }
            return (relationship.name, column.name, slot)
        }
        self.entityTypeColumns = self.toOneRelationships.compactMap { relationship in
            guard let column = table.entityTypeColumn(for: relationship.name), let slot = toOneSlots.index[relationship.name] else { return nil }
            return (relationship.name, column.name, slot)
        }
        // Every stored attribute's and to-one relationship's name has a slot (the first of
        // its name, as validation read them by name).
        func slot(_ name: String, in slots: PropertySlots) -> Int {
            guard let slot = slots.index[name] else { preconditionFailure("\(entity.name).\(name) has no slot") }
            return slot
        }
        self.validatedAttributes = self.storedAttributes.sorted { $0.name < $1.name }.map { ($0, slot($0.name, in: attributeSlots)) }
        self.requiredToOneSlots = toOneRelationships.filter { !$0.isOptional }.map { ($0.name, slot($0.name, in: toOneSlots)) }
    }

    /// Where each property of a row of a ``SelectQuery`` on this entity's table is: worked
    /// out once per entity rather than per row.
    ///
    /// Transient attributes are not read: an object starts from ``defaultValues``, which
    /// hold their defaults.
    struct RowLayout: Sendable {
        let attributes: [(slot: Int, type: AttributeType, index: Int)]
        let toOne: [(slot: Int, index: Int, entity: String, root: String)]
    }

    func rowLayout(for query: SelectQuery, layouts: [String: EntityLayout]) -> RowLayout {
        var stored: [(Int, AttributeType, Int)] = []
        for (slot, attribute) in attributesBySlot.enumerated() where !attribute.isTransient {
            guard let column = table.column(for: attribute.name), let index = query.columnIndex[column.name] else { continue }
            stored.append((slot, attribute.type, index))
        }
        var toOne: [(Int, Int, String, String)] = []
        for relationship in toOneRelationships {
            guard let slot = toOneSlots.index[relationship.name], let column = table.column(for: relationship.name),
                let index = query.columnIndex[column.name], let destination = layouts[relationship.destinationEntityName]
            else { continue }
            toOne.append((slot, index, destination.entity.name, destination.table.rootEntityName))
        }
        return RowLayout(attributes: stored, toOne: toOne)
    }
}
