extension MigrationManager {
    /// Reserves each entity mapping's identity keys in the destination and returns the
    /// index that records the pairs (see ``AssociationIndex``).
    ///
    /// Mappings into one destination root table take consecutive ranges, one per source root
    /// table, in mapping order, above the keys the table has already (an earlier mapping
    /// model of the step may have filled it). Mappings of different entities of one source
    /// hierarchy share its range, as their rows are different rows of one table, so keys
    /// stay what they were; a second mapping of the same source entity gets a range of its
    /// own. `Z_PRIMARYKEY` then starts above every range, so objects that are not identity
    /// destinations get keys that no identity pair can take.
    ///
    /// In a fused pass, the source rows of a mapping that takes its instances from the step
    /// before are not stored: `carried` says where their keys lie and how many there are,
    /// by the mapping that takes them.
    func makeAssociationIndex(
        source: PersistentStore,
        destination: PersistentStore,
        carried: [String: FusedLink.Ready.Keys] = [:]
    ) async throws -> (index: AssociationIndex, sourceRows: [String: Int]) {
        let table = AssociationTable(database: destination.database)
        try await table.create()
        // An earlier mapping model's pairs stay findable; its keys are below Z_MAX already.
        var keys = configuration.stepAssociations?.keys ?? [:]
        var sourceRows: [String: Int] = [:]
        var reserved: [String: Int64] = [:]
        var bases: [String: Int64] = [:]
        /// Per destination root: the ranges taken, by source root, and the source entities in each.
        var ranges: [String: [(sourceRoot: String, offset: Int64, entities: Set<String>)]] = [:]
        for mapping in mappingModel.entityMappings where mapping.type != .remove && mapping.type != .add {
            guard let sourceName = mapping.sourceEntityName, let sourceEntity = sourceModel.entity(named: sourceName),
                let destinationName = mapping.destinationEntityName, let destinationEntity = destinationModel.entity(named: destinationName),
                let sourceTable = source.schema.table(for: sourceModel.rootEntity(of: sourceEntity).name),
                let destinationTable = destination.schema.table(for: destinationModel.rootEntity(of: destinationEntity).name)
            else { continue }
            let largest: Int64
            if let keys = carried[mapping.name] {
                // Carried in memory: the source table is empty; the step before says where the keys are.
                largest = keys.largest
                sourceRows[mapping.name] = keys.rows
            } else {
                let sql: SQL = "SELECT coalesce(max(\(storeName: "Z_PK")), 0), count(*) FROM \(identifier: sourceTable.name)"
                let row = try await source.database.read { try $0.rows(sql).first }
                largest = row?[0].int64 ?? 0
                sourceRows[mapping.name] = Int(row?[1].int64 ?? 0)
            }
            let root = destinationTable.rootEntityName
            if bases[root] == nil {
                let maxSQL: SQL =
                    "SELECT \(storeName: "Z_MAX") FROM \(storeName: "Z_PRIMARYKEY") WHERE \(storeName: "Z_ENT") = \(destinationTable.entityNumber)"
                bases[root] = try await destination.database.read { try $0.scalar(maxSQL)?.int64 } ?? 0
            }
            guard largest <= AssociationIndex.largestIdentityKey else {
                keys[mapping.name] = .init(sourceRoot: sourceTable.rootEntityName, destinationRoot: root, offset: 0, identities: nil)
                continue
            }
            let offset: Int64
            if let index = ranges[root, default: []].firstIndex(where: {
                $0.sourceRoot == sourceTable.rootEntityName && !$0.entities.contains(sourceName)
            }) {
                offset = ranges[root]![index].offset
                ranges[root]![index].entities.insert(sourceName)
            } else {
                offset = bases[root]! + reserved[root, default: 0]
                ranges[root, default: []].append((sourceTable.rootEntityName, offset, [sourceName]))
                reserved[root, default: 0] += largest
            }
            keys[mapping.name] = .init(
                sourceRoot: sourceTable.rootEntityName,
                destinationRoot: root,
                offset: offset,
                identities: KeyBitSet(capacity: largest)
            )
        }
        for (root, count) in reserved where count > 0 {
            guard let number = destination.schema.table(for: root)?.entityNumber else { continue }
            let top = bases[root, default: 0] + count
            let sql: SQL =
                "UPDATE \(storeName: "Z_PRIMARYKEY") SET \(storeName: "Z_MAX") = \(top) WHERE \(storeName: "Z_ENT") = \(number) AND \(storeName: "Z_MAX") < \(top)"
            _ = try await destination.database.write { try $0.run(sql) }
        }
        return (AssociationIndex(table: table, mappings: keys), sourceRows)
    }

    /// Writes the foreign keys of `destination`, associated with `source` by `mapping`, that
    /// the mapping's relationship stage would set by look-up: the source's foreign key plus
    /// the target mapping's offset. A target whose instances are all created already gives
    /// no key for a source without a destination; one still running gets the key, and
    /// ``clearDanglingForeignKeys(_:destination:)`` removes the ones left pointing nowhere.
    func writeForeignKeys(
        _ lookups: [RelationshipStage.ForeignKeyLookup],
        of destination: ManagedObject,
        from source: ManagedObject,
        associations: AssociationIndex,
        created: Set<String>
    ) {
        var values: [String: ObjectID?] = [:]
        for lookup in lookups {
            guard let key = source.destinationID(forKey: lookup.sourceRelationship)?.primaryKey,
                let target = associations.keys(of: lookup.targetMapping), let identities = target.identities,
                key <= identities.capacity, !created.contains(lookup.targetMapping) || identities.contains(key)
            else {
                values[lookup.relationship] = ObjectID?.none
                continue
            }
            values[lookup.relationship] = ObjectID(
                entityName: lookup.targetEntity,
                rootEntityName: lookup.targetRoot,
                key: .permanent(key + target.offset)
            )
        }
        destination.state.withLock { state in
            for (name, value) in values { state.toOne.updateValue(value, forKey: name) }
        }
    }

    /// After every mapping has created its instances: foreign keys written for a target
    /// mapping that was still running, and that left some source rows without a
    /// destination, are cleared where they name no row.
    ///
    /// `readByNextStep`: the destination is a fused pass's intermediate store, which the next
    /// step has read already; clearing a key there would come too late, so the pass cannot
    /// be fused (``StepsNotFusable``).
    func clearDanglingForeignKeys(
        _ stages: [(mapping: EntityMapping, lookups: [RelationshipStage.ForeignKeyLookup])],
        destination: PersistentStore,
        associations: AssociationIndex,
        sourceRows: [String: Int],
        readByNextStep: Bool = false
    ) async throws {
        var statements: [SQL] = []
        for (mapping, lookups) in stages {
            guard let name = mapping.destinationEntityName, let table = destination.schema.table(for: name) else { continue }
            for lookup in lookups where !associations.coversEveryRow(of: lookup.targetMapping, sourceRows: sourceRows[lookup.targetMapping] ?? 0) {
                guard let column = table.column(for: lookup.relationship)?.name, let target = destination.schema.table(for: lookup.targetRoot) else {
                    continue
                }
                // The destination's entity beside the key, where Core Data keeps it, goes with the key.
                let typeColumn: SQL = table.entityTypeColumn(for: lookup.relationship).map { ", \(identifier: $0.name) = NULL" } ?? ""
                let (tableName, columnName): (SQL, SQL) = ("\(identifier: table.name)", "\(identifier: column)")
                statements.append(
                    """
                    UPDATE \(tableName) SET \(columnName) = NULL\(typeColumn) WHERE \(storeName: "Z_ENT") IN (\(literals: table.entityNumbers)) \
                    AND \(columnName) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(identifier: target.name) t WHERE t.\(storeName: "Z_PK") = \(tableName).\(columnName))
                    """
                )
            }
        }
        guard !statements.isEmpty else { return }
        if readByNextStep {
            throw StepsNotFusable(
                reason:
                    "\(stages.map(\.mapping.name).joined(separator: ", ")) left foreign keys naming no instance, to be cleared after the next step read them"
            )
        }
        try await destination.database.write { [statements] connection in
            for statement in statements { try connection.execute(statement) }
        }
    }
}
