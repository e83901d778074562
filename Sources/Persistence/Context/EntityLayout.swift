/// An entity's properties resolved once per context: inherited ones included, by name.
struct EntityLayout: Sendable {
    let entity: EntityDescription
    let table: EntityTable
    let attributes: [String: AttributeDescription]
    let relationships: [String: RelationshipDescription]
    /// Attributes in a stable order, for inserts.
    let storedAttributes: [AttributeDescription]
    let toOneRelationships: [RelationshipDescription]

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
    }
}
