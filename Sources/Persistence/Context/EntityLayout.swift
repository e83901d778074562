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
    /// What a new object starts with: every attribute at its default, no to-one
    /// destinations, every key changed. Copied per object (copy on write), not rebuilt.
    let defaultValues: [String: AttributeValue]
    let noDestinations: [String: ObjectID?]
    let propertyKeys: Set<String>
    let attributeKeys: Set<String>
    /// The columns a save writes for every stored attribute and to-one relationship, in order.
    let attributeColumns: [(attribute: String, column: String, type: AttributeType)]
    let foreignKeyColumns: [(relationship: String, column: String)]

    init(entity: EntityDescription, schema: StoreSchema) {
        let model = schema.model
        self.entity = entity
        self.table = schema.table(for: entity.name)!
        let allAttributes = model.attributes(of: entity)
        let allRelationships = model.relationships(of: entity)
        self.attributes = Dictionary(allAttributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.relationships = Dictionary(allRelationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.storedAttributes = allAttributes.filter { !$0.isTransient }
        self.toOneRelationships = allRelationships.filter { !$0.isToMany && !$0.isTransient }
        var defaults: [String: AttributeValue] = [:]
        for attribute in attributes.values { defaults[attribute.name] = attribute.defaultValue ?? .null }
        self.defaultValues = defaults
        self.noDestinations = Dictionary(uniqueKeysWithValues: toOneRelationships.map { ($0.name, ObjectID?.none) })
        self.propertyKeys = Set(attributes.keys).union(relationships.keys)
        self.attributeKeys = Set(attributes.keys)
        let table = self.table
        self.attributeColumns = self.storedAttributes.compactMap { attribute in
            table.column(for: attribute.name).map { (attribute.name, $0.name, attribute.type) }
        }
        self.foreignKeyColumns = self.toOneRelationships.compactMap { relationship in
            table.column(for: relationship.name).map { (relationship.name, $0.name) }
        }
    }

    /// Where each property of a row of a ``SelectQuery`` on this entity's table is: worked
    /// out once per entity rather than per row.
    struct RowLayout: Sendable {
        let attributes: [(name: String, type: AttributeType, index: Int)]
        let transients: [(name: String, value: AttributeValue)]
        let toOne: [(name: String, index: Int, entity: String, root: String)]
    }

    func rowLayout(for query: SelectQuery, layouts: [String: EntityLayout]) -> RowLayout {
        var stored: [(String, AttributeType, Int)] = []
        var transients: [(String, AttributeValue)] = []
        for attribute in attributes.values {
            if attribute.isTransient {
                transients.append((attribute.name, attribute.defaultValue ?? .null))
            } else if let column = table.column(for: attribute.name), let index = query.columnIndex[column.name] {
                stored.append((attribute.name, attribute.type, index))
            }
        }
        var toOne: [(String, Int, String, String)] = []
        for relationship in toOneRelationships {
            guard let column = table.column(for: relationship.name), let index = query.columnIndex[column.name],
                let destination = layouts[relationship.destinationEntityName]
            else { continue }
            toOne.append((relationship.name, index, destination.entity.name, destination.table.rootEntityName))
        }
        return RowLayout(attributes: stored, transients: transients, toOne: toOne)
    }
}
