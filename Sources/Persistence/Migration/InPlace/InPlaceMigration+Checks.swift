/// The destination model's rules that an in-place step can break, checked in SQL inside
/// the step's transaction, so a failing store is rolled back rather than committed.
///
/// A narrower integer type is checked before the statements run, on the source column:
/// PostgreSQL refuses to convert a value out of range (`smallint out of range`), so a check
/// afterwards could never name the objects.
///
/// Inference already guarantees what it can (a new required attribute has a default that
/// fills every row); what is left is a property whose rules tighten: an attribute or to-one
/// that becomes required with no default (Core Data infers it, and its migration fails on
/// the rows without a value), a narrower integer type, a new or tighter minimum or maximum
/// (a length for strings).
extension InPlaceMigration {
    /// One rule over one attribute's column.
    struct Check: Sendable, Hashable {
        var entity: String
        var key: String
        var code: ValidationError.Issue.Code
        /// `SELECT Z_PK FROM … WHERE <violation> LIMIT 5` on the destination layout.
        var sql: SQL
        /// Runs before the statements, on the source layout (the rows keep their `Z_PK`).
        var beforeSteps = false
    }

    static func checks(
        mapping: MappingModel,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect d: any SQLDialect,
        sourceLayout: StoreLayout? = nil,
        destinationNumbering: EntityNumbering? = nil
    ) -> [Check] {
        let schema = StoreSchema(model: destination, dialect: d, numbering: destinationNumbering)
        let sourceSchema = StoreSchema(model: source, dialect: d, layout: sourceLayout)
        var checks: [Check] = []
        for entityMapping in mapping.entityMappings {
            guard let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
                let destinationName = entityMapping.destinationEntityName, let table = schema.table(for: destinationName)
            else { continue }
            // Only this entity's own rows: its sub-entities have mappings of their own.
            let rows: SQL = "\(storeName: "Z_ENT") = \(literal: table.entityNumber)"
            for attribute in destination.attributes(of: destination.entity(named: destinationName)!) where !attribute.isTransient {
                guard let path = entityMapping.propertyMapping(named: attribute.name)?.valueExpression?.sourceKeyPath, path.count == 1,
                    let old = source.attribute(named: path[0], of: sourceEntity), let name = table.column(for: attribute.name)?.name
                else { continue }
                let column: SQL = "\(identifier: name)"
                func check(_ code: ValidationError.Issue.Code, _ violation: SQL) {
                    checks.append(
                        Check(
                            entity: destinationName,
                            key: attribute.name,
                            code: code,
                            sql: "SELECT \(storeName: "Z_PK") FROM \(identifier: table.name) WHERE \(rows) AND (\(violation)) LIMIT 5"
                        )
                    )
                }
                if let range = attribute.type.integerRange, range != old.type.integerRange, attribute.type != .integer64 {
                    if [.integer16, .integer32, .integer64, .float, .double].contains(old.type),
                        let sourceTable = sourceSchema.table(for: sourceName), let sourceColumn = sourceTable.column(for: old.name)?.name
                    {
                        // The value the conversion keeps (a number's integer part) must fit.
                        let violation: SQL = """
                            \(identifier: sourceColumn) <= \(literal: range.lowerBound - 1) OR \(identifier: sourceColumn) >= \(literal: range.upperBound + 1)
                            """
                        let sql: SQL = """
                            SELECT \(storeName: "Z_PK") FROM \(identifier: sourceTable.name) WHERE \(storeName: "Z_ENT") = \(literal: sourceTable.entityNumber) \
                            AND (\(violation)) LIMIT 5
                            """
                        checks.append(Check(entity: destinationName, key: attribute.name, code: .valueTooLarge, sql: sql, beforeSteps: true))
                    } else {
                        check(.valueTooLarge, "\(column) < \(literal: range.lowerBound) OR \(column) > \(literal: range.upperBound)")
                    }
                }
                if !attribute.isOptional, old.isOptional, attribute.defaultValue == nil {
                    check(.missingValue, "\(column) IS NULL")
                }
                let measure: SQL = attribute.type == .string ? "length(\(column))" : column
                let boundType: AttributeType = attribute.type == .string ? .integer64 : attribute.type
                if let minimum = attribute.minValue, minimum != old.minValue || attribute.type != old.type {
                    check(attribute.type == .string ? .stringTooShort : .valueTooSmall, "\(measure) < \(d.databaseValue(minimum, type: boundType))")
                }
                if let maximum = attribute.maxValue, maximum != old.maxValue || attribute.type != old.type {
                    check(attribute.type == .string ? .stringTooLong : .valueTooLarge, "\(measure) > \(d.databaseValue(maximum, type: boundType))")
                }
            }
            for relationship in destination.relationships(of: destination.entity(named: destinationName)!)
            where !relationship.isToMany && !relationship.isOptional {
                guard
                    let path = entityMapping.propertyMapping(named: relationship.name)?.valueExpression?.destinationInstancesCall?.sources
                        .sourceKeyPath,
                    path.count == 1, let old = source.relationship(named: path[0], of: sourceEntity), old.isOptional,
                    let name = table.column(for: relationship.name)?.name
                else { continue }
                checks.append(
                    Check(
                        entity: destinationName,
                        key: relationship.name,
                        code: .missingValue,
                        sql: "SELECT \(storeName: "Z_PK") FROM \(identifier: table.name) WHERE \(rows) AND \(identifier: name) IS NULL LIMIT 5"
                    )
                )
            }
        }
        return checks
    }

    /// Count limits of to-many relationships that are new or tighter than their source's.
    static func countChecks(
        mapping: MappingModel,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect d: any SQLDialect,
        destinationNumbering: EntityNumbering? = nil
    ) -> [RelationshipCountCheck] {
        let schema = StoreSchema(model: destination, dialect: d, numbering: destinationNumbering)
        return RelationshipCountCheck.checks(model: destination, schema: schema) { entity, relationship in
            guard let entityMapping = mapping.entityMappings.first(where: { $0.destinationEntityName == entity.name }),
                let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
                let path = entityMapping.propertyMapping(named: relationship.name)?.valueExpression?.destinationInstancesCall?.sources.sourceKeyPath,
                let old = source.relationship(named: path[0], of: sourceEntity)
            else { return true }
            return !old.isToMany || old.minCount != relationship.minCount || old.maxCount != relationship.maxCount
        }
    }

    /// Runs the checks after the step's statements.
    ///
    /// - Throws: ``MigrationError/Code/validationFailed`` naming objects and rules (never values).
    /// Runs the checks of one phase: `beforeSteps` on the source layout, the others (count
    /// limits among them) on the migrated one.
    func runChecks(on connection: any DatabaseConnection, destination: ManagedObjectModel, beforeSteps: Bool) throws {
        var issues: [ValidationError.Issue] = beforeSteps ? [] : try countChecks.flatMap { try $0.issues(on: connection) }
        for check in checks where check.beforeSteps == beforeSteps {
            let rootName = destination.rootEntity(of: destination.entity(named: check.entity)!).name
            for row in try connection.rows(check.sql) {
                guard let pk = row[0].int64 else { continue }
                let id = ObjectID(entityName: check.entity, rootEntityName: rootName, key: .permanent(pk))
                issues.append(
                    .init(code: check.code, entity: check.entity, objectID: id, key: check.key, message: "\(check.key) breaks its \(check.code) rule")
                )
            }
        }
        guard !issues.isEmpty else { return }
        let shown = issues.prefix(5).map { "\($0.objectID) \($0.key ?? "?"): \($0.code)" }.joined(separator: "; ")
        throw MigrationError(
            .validationFailed,
            "the migrated objects break the rules of '\(destination.name)': \(shown)\(issues.count > 5 ? " …" : "")",
            hint: "change the data, or write a mapping model whose expressions make every object valid; the store was not changed",
            underlying: ValidationError(issues: issues)
        )
    }
}
