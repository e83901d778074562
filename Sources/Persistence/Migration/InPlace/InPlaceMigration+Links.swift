/// Where the pairs of a source relationship are, and clearing the pairs that no longer fit
/// the destination.
extension InPlacePlanner {
    // MARK: Source links

    /// The source relationship a destination relationship continues, and where its pairs
    /// are stored. Every entity inheriting the relationship must continue the same one.
    func sourceLink(for side: Side) throws(Unsupported) -> (link: SourceLink, declaring: String, relationship: String)? {
        var found: (link: SourceLink, declaring: String, relationship: String)?
        var withoutSource: [EntityDescription] = []
        for entity in destination.entityAndDescendants(of: side.entity) {
            guard let sourceEntity = analysis.sourceEntity(of: entity) else { continue }
            guard let name = analysis.relationshipSources[entity.name]?[side.relationship.name],
                let relationship = source.relationship(named: name, of: sourceEntity),
                let declaring = source.declaringEntity(ofRelationship: name, from: sourceEntity)
            else {
                withoutSource.append(sourceEntity)
                continue
            }
            if let found {
                guard found.declaring == declaring.name, found.relationship == name else {
                    throw Unsupported("\(entity.name).\(side.relationship.name) and \(side.key) come from different source relationships")
                }
            } else {
                found = (try sourceLink(declaring, relationship), declaring.name, name)
            }
        }
        if let found, let declaring = source.entity(named: found.declaring),
            let stray = withoutSource.first(where: { source.entity($0, isKindOf: declaring) })
        {
            throw Unsupported("\(side.key) continues \(found.declaring).\(found.relationship), but not for \(stray.name)")
        }
        return found
    }

    private func sourceLink(_ declaring: EntityDescription, _ relationship: RelationshipDescription) throws(Unsupported) -> SourceLink {
        let missing = Unsupported("\(declaring.name).\(relationship.name) is not stored where the source layout says")
        guard let ownTable = from.table(for: declaring.name), let target = source.entity(named: relationship.destinationEntityName),
            let otherTable = from.table(for: target.name)
        else { throw missing }
        let storage: SourceLink.Storage
        var keyOrder: String?
        if !relationship.isToMany {
            guard let column = ownTable.column(for: relationship.name) else { throw missing }
            storage = .foreignKey(host: .own, table: ownTable.name, column: column.name)
            keyOrder = source.inverse(of: relationship).flatMap { from.orderColumn(of: $0, in: target) }
        } else if let inverse = source.inverse(of: relationship), !inverse.isToMany {
            guard let column = otherTable.column(for: inverse.name) else { throw missing }
            storage = .foreignKey(host: .other, table: otherTable.name, column: column.name)
            keyOrder = from.orderColumn(of: relationship, in: declaring)
        } else if case .hiddenForeignKey(_, let column)? = from.storage(of: relationship, in: declaring) {
            // Core Data's hidden key of a to-many without an inverse: a key on the other table.
            storage = .foreignKey(host: .other, table: otherTable.name, column: column)
            keyOrder = from.orderColumn(of: relationship, in: declaring)
        } else {
            guard let join = from.joinTable(entity: declaring.name, relationship: relationship.name) else { throw missing }
            let ownIsSource = join.sourceEntity == declaring.name && join.relationship == relationship.name
            storage = .join(
                table: join.name,
                ownColumn: ownIsSource ? join.sourceColumn : join.destinationColumn,
                otherColumn: ownIsSource ? join.destinationColumn : join.sourceColumn,
                orderColumn: join.orderColumn,
                inverseOrderColumn: join.inverseOrderColumn,
                ownIsSource: ownIsSource
            )
        }
        return SourceLink(
            storage: storage,
            ownEntity: declaring.name,
            otherEntity: target.name,
            ownTable: ownTable.name,
            otherTable: otherTable.name,
            keyOrderColumn: keyOrder
        )
    }

    // MARK: Links that no longer fit

    /// Clears pairs whose rows go (removed entities) or whose rows no longer are of the kind
    /// the destination relationship leads to. Returns whether anything needed clearing.
    mutating func clearInvalidLinks(_ link: SourceLink, side: Side) -> Bool {
        guard let target = destination.entity(named: side.relationship.destinationEntityName) else { return false }
        var changed = false
        for (end, kind) in [(SourceLink.End.own, side.entity), (.other, target)] {
            let numbers = invalidEntityNumbers(sourceEnd: link.entity(at: end), destinationEnd: kind)
            guard !numbers.isEmpty else { continue }
            changed = true
            let rows: SQL = "SELECT \(storeName: "Z_PK") FROM \(identifier: link.table(at: end)) WHERE \(entityCondition(numbers))"
            switch link.storage {
            case let .foreignKey(host, table, column) where host == end:
                // The rows holding the key: removed ones are deleted anyway.
                let staying = numbers.filter { number in
                    from.entityNames[number].map { analysis.destinationOf[$0] != nil } ?? false
                }
                if !staying.isEmpty {
                    add(
                        .clearReferences,
                        "UPDATE \(identifier: table) SET \(identifier: column) = NULL WHERE \(entityCondition(staying)) AND \(identifier: column) IS NOT NULL"
                    )
                }
            case let .foreignKey(_, table, column):
                add(.clearReferences, "UPDATE \(identifier: table) SET \(identifier: column) = NULL WHERE \(identifier: column) IN (\(rows))")
            case let .join(table, own, other, _, _, _):
                add(.clearReferences, "DELETE FROM \(identifier: table) WHERE \(identifier: end == .own ? own : other) IN (\(rows))")
            }
        }
        return changed
    }

    /// Source entities at one end of a link whose rows are removed, or become something the
    /// destination end does not accept.
    private func invalidEntityNumbers(sourceEnd: String, destinationEnd: EntityDescription) -> [Int] {
        guard let entity = source.entity(named: sourceEnd) else { return [] }
        return source.entityAndDescendants(of: entity).filter { candidate in
            guard let migrated = analysis.destinationEntity(of: candidate) else { return true }
            return !destination.entity(migrated, isKindOf: destinationEnd)
        }.compactMap { from.table(for: $0.name)?.entityNumber }.sorted()
    }
}
