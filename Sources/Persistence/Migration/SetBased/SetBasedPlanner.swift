/// Works out a ``SetBasedMigration``'s statements, or why there can be none.
struct SetBasedPlanner {
    let mapping: MappingModel
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let dialect: any SQLDialect
    let sourceSchema: StoreSchema
    let destinationSchema: StoreSchema

    init(
        mapping: MappingModel,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect: any SQLDialect,
        sourceLayout: StoreLayout? = nil
    ) {
        self.mapping = mapping
        self.source = source
        self.destination = destination
        self.dialect = dialect
        self.sourceSchema = StoreSchema(model: source, dialect: dialect, layout: sourceLayout)
        self.destinationSchema = StoreSchema(model: destination, dialect: dialect)
    }

    func unsupported(_ reason: String) -> SetBasedMigration.Unsupported {
        SetBasedMigration.Unsupported(reason: reason)
    }

    func plan() throws -> SetBasedMigration {
        var inserts: [EntityMappingInsert] = []
        var joinInserts: [SetBasedMigration.JoinInsert] = []
        var joinTablesDone: Set<String> = []
        var keyUpdates: [SetBasedMigration.KeyUpdate] = []
        for entityMapping in mapping.entityMappings {
            if entityMapping.policyName != nil || entityMapping.type == .custom { throw unsupported("\(entityMapping.name) runs a policy") }
            if entityMapping.sourceFilter != nil { throw unsupported("\(entityMapping.name) filters its source") }
            guard entityMapping.type == .copy || entityMapping.type == .transform else { continue }
            guard let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
                let destinationName = entityMapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName),
                let sourceTable = sourceSchema.table(for: sourceName), let destinationTable = destinationSchema.table(for: destinationName)
            else { throw unsupported("\(entityMapping.name) names an entity the models do not have") }

            var insert: EntityMappingInsert
            do {
                insert = try EntityMappingInsert(
                    entityMapping,
                    source: (sourceEntity, sourceTable),
                    sourceSchema: sourceSchema,
                    destination: (destinationEntity, destinationTable),
                    of: destination
                )
            } catch let untranslatable as SQLCompiler.Untranslatable {
                throw unsupported("\(entityMapping.name).\(untranslatable.attribute)'s value expression has no SQL equivalent")
            }
            for relationship in destination.relationships(of: destinationEntity) where !relationship.isTransient {
                let expression = entityMapping.propertyMapping(named: relationship.name)?.valueExpression
                switch destinationSchema.storage(of: relationship, in: destinationEntity) {
                case .foreignKey(let column)?:
                    guard let expression else { continue }
                    let (key, entityNumber) = try foreignKey(
                        expression,
                        sourceEntity: sourceEntity,
                        mappingName: entityMapping.name,
                        property: relationship.name
                    )
                    insert.setKey(of: relationship.name, column: column, to: key, entityNumber: entityNumber)
                    // The row's place among its destination's, when that side is ordered:
                    // the source's, where the source ordered the same pairs beside the same key.
                    if let inverse = destination.inverse(of: relationship), inverse.isToMany,
                        let target = destination.entity(named: relationship.destinationEntityName),
                        let orderColumn = destinationSchema.orderColumn(of: inverse, in: target)
                    {
                        insert.set(orderColumn, to: try sourceOrder(expression, sourceEntity: sourceEntity, property: relationship.name))
                    }
                case .inverseForeignKey?:
                    // Filled from the other side's foreign key; that side must map it.
                    guard expression != nil, let inverse = destination.inverse(of: relationship) else { continue }
                    let inverseMapped = mapping.entityMappings.contains { other in
                        guard let name = other.destinationEntityName, let entity = destination.entity(named: name) else { return false }
                        return destination.entity(entity, isKindOf: destination.entity(named: relationship.destinationEntityName)!)
                            && other.propertyMapping(named: inverse.name)?.valueExpression != nil
                    }
                    if !inverseMapped { throw unsupported("\(entityMapping.name).\(relationship.name) is only mapped from its to-many side") }
                case .hiddenForeignKey(let table, let column)?:
                    // Core Data's hidden key on the destination's rows: set once they are all written.
                    guard let expression else { continue }
                    let orderColumn = destinationSchema.orderColumn(of: relationship, in: destinationEntity)
                    let pairs = try pairs(
                        expression,
                        sourceEntity: sourceEntity,
                        sourceTable: sourceTable,
                        mappingName: entityMapping.name,
                        property: relationship.name,
                        withOrder: orderColumn != nil
                    )
                    keyUpdates.append(SetBasedMigration.KeyUpdate(table: table.name, keyColumn: column, orderColumn: orderColumn, pairs: pairs))
                case .joinTable(let join, let fromSource)?:
                    guard let expression, !joinTablesDone.contains(join.name) else { continue }
                    joinTablesDone.insert(join.name)
                    joinInserts.append(
                        try joinRows(
                            expression,
                            join: join,
                            fromOwner: fromSource,
                            sourceEntity: sourceEntity,
                            sourceTable: sourceTable,
                            mappingName: entityMapping.name,
                            property: relationship.name
                        )
                    )
                case nil:
                    continue
                }
            }
            inserts.append(insert)
        }
        return SetBasedMigration(source: source, destination: destination, inserts: inserts, joinInserts: joinInserts, keyUpdates: keyUpdates)
    }

    /// The entity mapping a `destinationInstances…` call names, and the source relationship it reads.
    private func lookup(
        _ expression: Expression,
        sourceEntity: EntityDescription,
        property: String
    ) throws -> (target: EntityMapping, relationship: RelationshipDescription) {
        guard let call = expression.destinationInstancesCall, let path = call.sources.sourceKeyPath, path.count == 1,
            let relationship = source.relationship(named: path[0], of: sourceEntity),
            let target = mapping.entityMapping(named: call.mapping), target.policyName == nil, target.sourceFilter == nil,
            target.type == .copy || target.type == .transform,
            target.sourceEntityName == relationship.destinationEntityName,
            let targetEntity = source.entity(named: relationship.destinationEntityName), source.subentities(of: targetEntity).isEmpty
        else { throw unsupported("\(property) is not a plain look-up of another mapping's instances") }
        return (target, relationship)
    }

    /// A to-one's key over the source row `s`, and the number of the entity its rows are.
    private func foreignKey(_ expression: Expression, sourceEntity: EntityDescription, mappingName: String, property: String) throws -> (SQL, Int) {
        let (target, relationship) = try lookup(expression, sourceEntity: sourceEntity, property: property)
        guard let targetEntity = target.destinationEntityName, let entityNumber = destinationSchema.table(for: targetEntity)?.entityNumber else {
            throw unsupported("\(mappingName).\(property) looks up \(target.name), whose instances the destination has no table for")
        }
        switch sourceSchema.storage(of: relationship, in: sourceEntity) {
        case .foreignKey(let column)?:
            return ("s.\(identifier: column) + \(offsetOf: target.name)", entityNumber)
        case .inverseForeignKey(let table, let column)?, .hiddenForeignKey(let table, let column)?:
            // A to-many that became a to-one keeps its first destination.
            return (
                "(SELECT min(x.\(storeName: "Z_PK")) FROM \(sourceTable: table.name) x WHERE x.\(identifier: column) = s.\(storeName: "Z_PK")) + \(offsetOf: target.name)",
                entityNumber
            )
        default:
            throw unsupported("\(mappingName).\(property) reads a many-to-many relationship")
        }
    }

    /// The source's order column beside the to-one key a look-up reads, over the source row `s`.
    private func sourceOrder(_ expression: Expression, sourceEntity: EntityDescription, property: String) throws -> SQL {
        let (_, relationship) = try lookup(expression, sourceEntity: sourceEntity, property: property)
        guard case .foreignKey? = sourceSchema.storage(of: relationship, in: sourceEntity), let inverse = source.inverse(of: relationship),
            let target = source.entity(named: relationship.destinationEntityName), let column = sourceSchema.orderColumn(of: inverse, in: target)
        else { return "NULL" }
        return "s.\(identifier: column)"
    }

    private func joinRows(
        _ expression: Expression,
        join: JoinTable,
        fromOwner: Bool,
        sourceEntity: EntityDescription,
        sourceTable: EntityTable,
        mappingName: String,
        property: String
    ) throws -> SetBasedMigration.JoinInsert {
        let ordered = join.orderColumn != nil || join.inverseOrderColumn != nil
        let pairs = try pairs(
            expression,
            sourceEntity: sourceEntity,
            sourceTable: sourceTable,
            mappingName: mappingName,
            property: property,
            withOrder: ordered
        )
        // The owner's key, the other's, the other's place among the owner's, the owner's among the other's.
        let (owner, other, ordersOther, ordersOwner) = fromOwner ? ("a", "b", "o", "io") : ("b", "a", "io", "o")
        var columns = [join.sourceColumn, join.destinationColumn]
        var selected = [owner, other]
        for (column, value) in [(join.orderColumn, ordersOther), (join.inverseOrderColumn, ordersOwner)] {
            guard let column else { continue }
            columns.append(column)
            selected.append(value)
        }
        return SetBasedMigration.JoinInsert(
            table: join.name,
            columns: columns,
            select: "SELECT \(selected.map { "\(identifier: $0)" as SQL }.joined(separator: ", ")) FROM (\(pairs)) p"
        )
    }

    /// The (this side's destination key `a`, the other side's destination key `b`) pairs of a
    /// to-many look-up, from wherever the source keeps them; `withOrder`, with `o`, the
    /// place of `b` among `a`'s destinations, and `io`, the place of `a` among `b`'s, where
    /// the source orders them (else NULL).
    private func pairs(
        _ expression: Expression,
        sourceEntity: EntityDescription,
        sourceTable: EntityTable,
        mappingName: String,
        property: String,
        withOrder: Bool = false
    ) throws -> SQL {
        let (target, relationship) = try lookup(expression, sourceEntity: sourceEntity, property: property)
        func order(_ row: String, _ column: String?, _ inverseColumn: String?) -> SQL {
            guard withOrder else { return "" }
            let values: [SQL] = [column, inverseColumn].map { column in column.map { "\(identifier: row).\(identifier: $0)" } ?? "NULL" }
            return ", \(values[0]) AS o, \(values[1]) AS io"
        }
        let inverseOrder = source.inverse(of: relationship).flatMap { inverse in
            source.entity(named: relationship.destinationEntityName).flatMap { sourceSchema.orderColumn(of: inverse, in: $0) }
        }
        // (this side's key, the other side's key) pairs from the source's storage.
        let pairs: SQL
        switch sourceSchema.storage(of: relationship, in: sourceEntity) {
        case .foreignKey(let column)?:
            pairs = """
                SELECT s.\(storeName: "Z_PK") + \(offsetOf: mappingName) AS a, s.\(identifier: column) + \(offsetOf: target.name) AS b\(order("s", nil, inverseOrder)) \
                FROM \(sourceTable: sourceTable.name) s WHERE s.\(identifier: column) IS NOT NULL AND s.\(storeName: "Z_ENT") = \(literal: sourceTable.entityNumber)
                """
        case .inverseForeignKey(let table, let column)?, .hiddenForeignKey(let table, let column)?:
            pairs = """
                SELECT x.\(identifier: column) + \(offsetOf: mappingName) AS a, x.\(storeName: "Z_PK") + \(offsetOf: target.name) AS b\
                \(order("x", sourceSchema.orderColumn(of: relationship, in: sourceEntity), nil)) \
                FROM \(sourceTable: table.name) x WHERE x.\(identifier: column) IS NOT NULL
                """
        case .joinTable(let sourceJoin, let sourceFromOwner)?:
            let mine = sourceFromOwner ? sourceJoin.sourceColumn : sourceJoin.destinationColumn
            let other = sourceFromOwner ? sourceJoin.destinationColumn : sourceJoin.sourceColumn
            pairs = """
                SELECT j.\(identifier: mine) + \(offsetOf: mappingName) AS a, j.\(identifier: other) + \(offsetOf: target.name) AS b\
                \(order("j", sourceJoin.orderColumn(fromSource: sourceFromOwner), sourceJoin.orderColumn(fromSource: !sourceFromOwner))) \
                FROM \(sourceTable: sourceJoin.name) j
                """
        case nil:
            throw unsupported("\(mappingName).\(property) reads a transient relationship")
        }
        return pairs
    }
}
