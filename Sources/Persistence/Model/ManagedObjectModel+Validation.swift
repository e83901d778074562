extension ManagedObjectModel {
    /// Checks names, parents, destinations and inverses, in the order the entities were
    /// declared, so the first problem in a file is the one reported; then the names the
    /// store would make of them (``validateStoreNames(declaredOrder:)``).
    ///
    /// Abstract entities are fine anywhere: they only cannot have instances.
    ///
    /// - Returns: what Core Data loads but Xcode warns of, in declared order.
    func validate(declaredOrder: [EntityDescription]) throws(ModelError) -> [ModelWarning] {
        var seen: Set<String> = []
        for entity in declaredOrder {
            guard seen.insert(entity.name).inserted else {
                throw ModelError(
                    .duplicateName,
                    "two entities are named \(quoted: entity.name); rename or remove one",
                    entity: entity.name
                )
            }
        }
        for entity in declaredOrder {
            try validateParent(of: entity)
        }
        for entity in declaredOrder {
            try validatePropertyNames(of: entity)
            try validateAttributeTypes(of: entity)
        }
        var warnings: [ModelWarning] = []
        for entity in declaredOrder {
            for relationship in entity.relationships {
                if let warning = try validate(relationship, of: entity) { warnings.append(warning) }
            }
        }
        for entity in declaredOrder {
            try validateConstraintsAndIndexes(of: entity)
        }
        try validateStoreNames(declaredOrder: declaredOrder)
        return warnings
    }

    /// A uniqueness constraint or fetch index names stored properties of the entity or its
    /// ancestors: attributes, or to-one relationships (a store keeps both in a column).
    private func validateConstraintsAndIndexes(of entity: EntityDescription) throws(ModelError) {
        let uses =
            entity.uniquenessConstraints.flatMap { $0.map { ("uniqueness constraint", $0) } }
            + entity.fetchIndexes.flatMap { index in index.elements.map { ("fetch index \(quoted: index.name)", $0.property) } }
        for (what, name) in uses {
            if let attribute = attribute(named: name, of: entity), !attribute.isTransient { continue }
            if let relationship = relationship(named: name, of: entity), !relationship.isToMany, !relationship.isTransient { continue }
            throw ModelError(
                .missingProperty,
                "the \(what) of \(quoted: entity.name) names \(quoted: name), which is no stored attribute or to-one relationship of it; "
                    + "change it in Xcode's Constraints or Indexes, or add the property",
                entity: entity.name
            )
        }
    }

    /// Only a transient may be ``AttributeType/undefined``: a stored value needs a column type.
    private func validateAttributeTypes(of entity: EntityDescription) throws(ModelError) {
        for attribute in entity.attributes where attribute.type == .undefined && !attribute.isTransient {
            throw ModelError(
                .unknownAttributeType,
                "an \(quoted: attribute.type.rawValue) attribute cannot be stored; make it transient or give it a type",
                entity: entity.name,
                property: attribute.name
            )
        }
    }

    private func validateParent(of entity: EntityDescription) throws(ModelError) {
        var visited: [String] = [entity.name]
        var current = entity
        while let parentName = current.parentName {
            guard let parent = self.entity(named: parentName) else {
                throw ModelError(
                    .missingEntity,
                    "the parent entity \(quoted: parentName) of \(quoted: current.name) does not exist; add it or change parentEntity",
                    entity: current.name
                )
            }
            guard !visited.contains(parentName) else {
                let cycle = (visited + [parentName]).map(\.shortenedForMessage).joined(separator: " → ")
                throw ModelError(
                    .inheritanceCycle,
                    "the entity inherits from itself (\(cycle)); remove one of the parent links",
                    entity: entity.name
                )
            }
            visited.append(parentName)
            current = parent
        }
    }

    /// Property names are unique across an entity and its ancestors, attributes and
    /// relationships together, since they share one namespace (and one table).
    private func validatePropertyNames(of entity: EntityDescription) throws(ModelError) {
        var owner: [String: String] = [:]
        for ancestor in ancestors(of: entity).reversed() {
            for name in ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name) where owner[name] == nil {
                owner[name] = ancestor.name
            }
        }
        for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
            if let existing = owner[name] {
                let where_ =
                    existing == entity.name ? "twice in \(quoted: entity.name)" : "in \(quoted: entity.name) and its ancestor \(quoted: existing)"
                throw ModelError(
                    .duplicateName,
                    "the property name \(quoted: name) is used \(where_); rename or remove one",
                    entity: entity.name,
                    property: name
                )
            }
            owner[name] = entity.name
        }
    }

    /// A relationship's destination and inverse exist, and the inverse leads back to the
    /// entity (or an ancestor). An inverse that does not name the relationship back is what
    /// Xcode warns of and Core Data loads (each side keeps its own inverse; see
    /// ``ManagedObjectModel/inverse(of:)``): a warning, not an error.
    private func validate(_ relationship: RelationshipDescription, of entity: EntityDescription) throws(ModelError) -> ModelWarning? {
        guard let destination = self.entity(named: relationship.destinationEntityName) else {
            throw ModelError(
                .missingEntity,
                "the destination entity \(quoted: relationship.destinationEntityName) does not exist; add it or change destinationEntity",
                entity: entity.name,
                property: relationship.name
            )
        }
        guard let inverseName = relationship.inverseName else { return nil }
        guard let inverse = self.relationship(named: inverseName, of: destination) else {
            throw ModelError(
                .missingInverse,
                "the inverse \(quoted: inverseName) is not a relationship of \(quoted: destination.name); add it there or change inverseName",
                entity: entity.name,
                property: relationship.name
            )
        }
        // The inverse may point at an ancestor of this entity: a sub-entity inherits relationships.
        let pointsBack =
            entity.name == inverse.destinationEntityName
            || ancestors(of: entity).contains { $0.name == inverse.destinationEntityName }
        let actual =
            "\(quoted: destination.name + "." + inverseName) leads to \(quoted: inverse.destinationEntityName) with inverse \(quoted: inverse.inverseName ?? "none")"
        guard pointsBack else {
            // Rows of another entity cannot be this relationship's inverse: no store could keep both.
            throw ModelError(
                .inconsistentInverse,
                "the inverse does not point back: \(actual), expected \(quoted: entity.name) with inverse \(quoted: relationship.name); make both sides name each other",
                entity: entity.name,
                property: relationship.name
            )
        }
        guard inverse.inverseName == relationship.name else {
            // Both to-many: the pair would share one join table that only one side names, and
            // the store's layout (StoreSchema) gives each side its own only when both name each other.
            guard !(relationship.isToMany && inverse.isToMany) else {
                throw ModelError(
                    .inconsistentInverse,
                    "the inverse is not reciprocal: \(actual); a many-to-many needs both sides to name each other to share one join table; "
                        + "set \(quoted: destination.name + "." + inverseName)'s inverse to \(quoted: relationship.name)",
                    entity: entity.name,
                    property: relationship.name
                )
            }
            return ModelWarning(
                "the inverse is not reciprocal: \(actual), not \(quoted: relationship.name); \(quoted: relationship.name) is kept through \(quoted: inverseName) "
                    + "but changing \(quoted: inverseName) does not change it, as in Core Data; make both sides name each other",
                entity: entity.name,
                property: relationship.name
            )
        }
        return nil
    }
}
