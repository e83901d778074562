/// How an entity mapping's destination instances are created in a streamed step.
enum InstanceStage: Sendable {
    /// One `INSERT … SELECT` from the source table: every value translates to SQL, no hook
    /// needs the instances one by one. Keys are the source keys plus the mapping's offset
    /// (identity pairs), so look-ups and foreign keys work as for streamed instances.
    case sql(EntityMappingInsert)
    /// As ``sql(_:)``, chunk by chunk, with the values the policy's and manager's hooks
    /// declare (``DeclaredValues``) worked out in Swift first.
    case declared(DeclaredInsert)
    /// The policy's `createDestinationInstances` runs for each source instance, because of `reason`.
    case perInstance(reason: String)

    /// Works out the stage of `entityMapping`.
    ///
    /// - Parameters:
    ///   - hooks: the per-instance hooks its policy overrides.
    ///   - associationCalls: whether the manager's `associate` must see its instances.
    ///   - relationships: how its relationships are set; look-ups through foreign keys are
    ///     written by the insert, per-instance ones are left to the relationship stage.
    ///   - sourceLayout: how the source store is laid out (its entities' numbers, its tables' names).
    ///   - declared: what the hooks that need the instances (the policy's
    ///     `createDestinationInstances`, the manager's `associate`) read and set, and who
    ///     declared it; `nil` when one of them does not declare it.
    static func plan(
        _ entityMapping: EntityMapping,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect: any SQLDialect,
        sourceLayout: StoreLayout? = nil,
        hooks: EntityMigrationPolicy.Hooks,
        associationCalls: Bool,
        declared: (values: DeclaredValues, by: [String])? = nil,
        relationships: RelationshipStage
    ) -> InstanceStage {
        let needsSwift = hooks.contains(.createDestinationInstances) || associationCalls
        if needsSwift, declared == nil {
            if hooks.contains(.createDestinationInstances) {
                return .perInstance(reason: "the policy \(entityMapping.policyName ?? "") overrides createDestinationInstances")
            }
            return .perInstance(reason: "the migration manager's associate hook takes its instances")
        }
        if entityMapping.sourceFilter != nil { return .perInstance(reason: "it filters its source") }
        let made = sqlInsert(
            entityMapping,
            source: source,
            destination: destination,
            dialect: dialect,
            sourceLayout: sourceLayout,
            relationships: relationships
        )
        guard case .success(let insert) = made else {
            if case .failure(let unsupported) = made { return .perInstance(reason: unsupported.reason) }
            return .perInstance(reason: "")
        }
        guard needsSwift, let declared else { return .sql(insert) }
        guard let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
            let destinationName = entityMapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName)
        else { return .perInstance(reason: "it does not map one source entity to one destination entity") }
        switch DeclaredInsert.plan(
            insert,
            declared: declared.values,
            declaredBy: declared.by,
            source: (source, sourceEntity),
            destination: (destination, destinationEntity)
        ) {
        case .success(let declaredInsert): return .declared(declaredInsert)
        case .failure(let unsupported): return .perInstance(reason: unsupported.reason)
        }
    }
}

/// Why an entity mapping's instances cannot be one `INSERT … SELECT`.
struct SQLInsertUnsupported: Error, Sendable {
    let reason: String
}

extension InstanceStage {
    /// The entity mapping's ``EntityMappingInsert`` with the foreign keys of look-up
    /// relationships, each the source foreign key plus the target mapping's offset.
    static func sqlInsert(
        _ entityMapping: EntityMapping,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect: any SQLDialect,
        sourceLayout: StoreLayout? = nil,
        relationships: RelationshipStage
    ) -> Result<EntityMappingInsert, SQLInsertUnsupported> {
        let sourceSchema = StoreSchema(model: source, dialect: dialect, layout: sourceLayout)
        let destinationSchema = StoreSchema(model: destination, dialect: dialect)
        guard entityMapping.type == .copy || entityMapping.type == .transform || entityMapping.type == .custom,
            let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
            let destinationName = entityMapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName),
            !destinationEntity.isAbstract,
            let sourceTable = sourceSchema.table(for: sourceName), let destinationTable = destinationSchema.table(for: destinationName)
        else { return .failure(SQLInsertUnsupported(reason: "it does not map one source entity to one concrete destination entity")) }
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
            return .failure(SQLInsertUnsupported(reason: "\(untranslatable.attribute)'s value expression has no SQL equivalent"))
        } catch {
            return .failure(SQLInsertUnsupported(reason: "\(error)"))
        }
        if case .foreignKeys(let lookups) = relationships {
            for lookup in lookups {
                guard let column = destinationTable.column(for: lookup.relationship)?.name,
                    let sourceColumn = sourceTable.column(for: lookup.sourceRelationship)?.name
                else { return .failure(SQLInsertUnsupported(reason: "\(lookup.relationship) has no foreign-key column")) }
                guard let entityNumber = destinationSchema.table(for: lookup.targetEntity)?.entityNumber else {
                    return .failure(
                        SQLInsertUnsupported(reason: "\(lookup.relationship) leads to \(lookup.targetEntity), which the destination does not have")
                    )
                }
                insert.setKey(
                    of: lookup.relationship,
                    column: column,
                    to: "s.\(identifier: sourceColumn) + \(offsetOf: lookup.targetMapping)",
                    entityNumber: entityNumber
                )
                // The row's place among its destination's, where that side is ordered: the
                // source's, beside the same key (as the set-based step sets it).
                if let orderColumn = destinationSchema.orderColumnsOfOrderedInverses["\(destinationName).\(lookup.relationship)"] {
                    let sourceOrder = sourceSchema.orderColumnsOfOrderedInverses["\(sourceName).\(lookup.sourceRelationship)"]
                    insert.set(orderColumn, to: sourceOrder.map { "s.\(identifier: $0)" } ?? "NULL")
                }
            }
        }
        return .success(insert)
    }
}
