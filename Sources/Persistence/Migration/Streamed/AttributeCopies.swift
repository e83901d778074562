/// How the default ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)``
/// sets each attribute of an entity mapping's destination, resolved once per source and
/// destination layout rather than per object: a plain `$source.<attribute>` (nearly every
/// attribute of an inferred mapping) becomes a copy from one slot to another, where looking
/// up the names cost four string hashes per attribute and object.
struct AttributeCopies: Sendable {
    /// One attribute mapping, in the mapping's order.
    enum Step {
        /// `$source.<attribute>` into an attribute the destination has: the source slot,
        /// the destination slot, the destination attribute (for its null rule) and its name.
        case copy(from: Int, to: Int, attribute: AttributeDescription, key: String)
        /// Any other expression: evaluated.
        case evaluate(PropertyMapping, Expression)
    }

    let source: EntityLayout
    let destination: EntityLayout
    /// What the plan was made from: a subclass may pass the default a changed mapping.
    let attributeMappings: [PropertyMapping]
    let steps: [Step]

    init(_ mapping: EntityMapping, source: EntityLayout, destination: EntityLayout) {
        self.source = source
        self.destination = destination
        self.attributeMappings = mapping.attributeMappings
        steps = mapping.attributeMappings.compactMap { attributeMapping -> Step? in
            guard let expression = attributeMapping.valueExpression else { return nil }
            if let path = expression.sourceKeyPath, path.count == 1, source.attributes[path[0]] != nil,
                let from = source.attributeSlots.index[path[0]], let attribute = destination.attributes[attributeMapping.name],
                let to = destination.attributeSlots.index[attributeMapping.name]
            {
                return .copy(from: from, to: to, attribute: attribute, key: attributeMapping.name)
            }
            return .evaluate(attributeMapping, expression)
        }
    }

    /// Whether this plan was made for these layouts and these attribute mappings (the
    /// same array, as a run passes, compares without walking it).
    func fits(_ mapping: EntityMapping, source: EntityLayout, destination: EntityLayout) -> Bool {
        self.source === source && self.destination === destination && attributeMappings == mapping.attributeMappings
    }
}
