import Logging

/// Which source rows a ``DataLossWarning`` concerns, counted on a store at the step's
/// source version.
enum RowCount: Sendable, Hashable {
    /// Every row of the entity (and its sub-entities).
    case rows(entity: String)
    /// Rows with a value for the attribute.
    case values(entity: String, property: String)
    /// The relationship's links, wherever they are stored.
    case links(entity: String, relationship: String)
    /// Rows with more than one object in the to-many relationship.
    case severalLinks(entity: String, relationship: String)
    /// Rows whose value meets any of the conditions.
    case misfits(entity: String, attribute: String, [ValueFit.Condition])
    /// Rows the filter does not match.
    case notMatching(entity: String, filter: Predicate)
}

extension MigrationPlan {
    /// The plan with the rows its steps' warnings concern counted on the store at `url`,
    /// which is at ``storeVersion``: the first step's, and a later step's where what it
    /// drops comes unchanged from the store through the steps before (plain key paths, no
    /// source filter or policy: a synopsis dropped by the second step of a way back is
    /// counted on the store's synopses). Other warnings stay uncounted, as does one whose
    /// count fails. The store is opened read-only and nothing is written.
    ///
    /// ```swift
    /// let plan = try await migrator.plan(forStoreAt: url).countingAffectedRows(in: url, logger: logger)
    /// for warning in plan.steps.first?.dataLossWarnings ?? [] { print(warning) } // "… — 1234 rows have a value"
    /// ```
    public func countingAffectedRows(in url: StoreURL, logger: Logger) async throws -> MigrationPlan {
        guard steps.contains(where: { !$0.dataLossWarnings.isEmpty }) else { return self }
        let store = try await PersistentStore.open(url, model: storeVersion, options: .readOnly, logger: logger)
        var counted = steps
        for stepIndex in counted.indices {
            for index in counted[stepIndex].dataLossWarnings.indices {
                guard let counting = Self.traced(counted[stepIndex].dataLossWarnings[index].counting, back: steps[..<stepIndex]) else { continue }
                // A count that fails (a filter the store cannot answer) leaves the warning uncounted, not the plan unshown.
                counted[stepIndex].dataLossWarnings[index].affectedRows = try? await Self.count(counting, in: store, logger: logger)
            }
        }
        await store.close()
        var plan = MigrationPlan(storeVersion: storeVersion, targetVersion: targetVersion, route: route, steps: counted)
        plan.storeMigratedBackFrom = storeMigratedBackFrom
        return plan
    }

    /// The count of a later step's warning as the store at the plan's start holds those rows:
    /// each step before carries the entity's rows, and the attribute, from one source
    /// entity and key, unchanged; `nil` where one does not.
    static func traced(_ counting: RowCount, back previous: ArraySlice<Step>) -> RowCount? {
        var current = counting
        for step in previous.reversed() {
            let entity: String
            switch current {
            case .rows(let name), .values(let name, _): entity = name
            default: return nil
            }
            let carriers = step.mappingModels.flatMap(\.entityMappings).filter { $0.type != .remove && $0.destinationEntityName == entity }
            guard carriers.count == 1, let carrier = carriers.first, let source = carrier.sourceEntityName,
                carrier.sourceFilter == nil, carrier.policyName == nil, step.managerType == MigrationManager.self
            else { return nil }
            switch current {
            case .values(_, let property):
                if let expression = carrier.propertyMapping(named: property)?.valueExpression {
                    guard let path = expression.sourceKeyPath, path.count == 1 else { return nil }
                    current = .values(entity: source, property: path[0])
                } else if carrier.type == .copy && carrier.attributeMappings.isEmpty {
                    current = .values(entity: source, property: property)
                } else {
                    return nil
                }
            default:
                current = .rows(entity: source)
            }
        }
        return current
    }

    private static func count(_ counting: RowCount, in store: PersistentStore, logger: Logger) async throws -> Int? {
        if case .notMatching(let entity, let filter) = counting {
            let context = ManagedObjectContext(store: store, logger: logger)
            return try await context.count(for: FetchRequest(entityName: entity, predicate: .not(filter), includesSubentities: false))
        }
        guard let sql = statement(counting, schema: store.schema) else { return nil }
        return Int(try await store.database.read { try $0.scalar(sql) }?.int64 ?? 0)
    }

    /// The `SELECT count(*)` of a count: names from the schema, numbers bound.
    private static func statement(_ counting: RowCount, schema: StoreSchema) -> SQL? {
        // Rows of exactly the entity: an entity mapping does not take its sub-entities' rows.
        func rows(of entity: String, where condition: SQL?) -> SQL? {
            guard let table = schema.table(for: entity) else { return nil }
            let sql: SQL = "SELECT count(*) FROM \(identifier: table.name) WHERE \(storeName: "Z_ENT") = \(literal: table.entityNumber)"
            return condition.map { sql + " AND (\($0))" } ?? sql
        }
        /// `column IN (the keys of the entity's rows)`, for links stored on the other side.
        func pointsAtRows(of entity: String, _ column: String) -> SQL {
            guard let table = schema.table(for: entity) else { return "\(identifier: column) IS NOT NULL" }
            return
                "\(identifier: column) IN (SELECT \(storeName: "Z_PK") FROM \(identifier: table.name) WHERE \(storeName: "Z_ENT") = \(literal: table.entityNumber))"
        }
        func column(_ entity: String, _ property: String) -> String? {
            schema.table(for: entity)?.column(for: property)?.name
        }
        func storage(_ entity: String, _ relationship: String) -> RelationshipStorage? {
            guard let description = schema.model.entity(named: entity),
                let found = schema.model.relationship(named: relationship, of: description)
            else { return nil }
            return schema.storage(of: found, in: description)
        }
        switch counting {
        case .rows(let entity):
            return rows(of: entity, where: nil)
        case .values(let entity, let property):
            guard let column = column(entity, property) else { return nil }
            return rows(of: entity, where: "\(identifier: column) IS NOT NULL")
        case .links(let entity, let relationship):
            switch storage(entity, relationship) {
            case .foreignKey(let column)?:
                return rows(of: entity, where: "\(identifier: column) IS NOT NULL")
            case .inverseForeignKey(let table, let column)?, .hiddenForeignKey(let table, let column)?:
                return "SELECT count(*) FROM \(identifier: table.name) WHERE \(pointsAtRows(of: entity, column))"
            case .joinTable(let join, let fromSource)?:
                return
                    "SELECT count(*) FROM \(identifier: join.name) WHERE \(pointsAtRows(of: entity, fromSource ? join.sourceColumn : join.destinationColumn))"
            case nil:
                return nil
            }
        case .severalLinks(let entity, let relationship):
            let (table, key): (String, String)
            switch storage(entity, relationship) {
            case .inverseForeignKey(let other, let column)?, .hiddenForeignKey(let other, let column)?: (table, key) = (other.name, column)
            case .joinTable(let join, let fromSource)?: (table, key) = (join.name, fromSource ? join.sourceColumn : join.destinationColumn)
            default: return nil
            }
            return """
                SELECT count(*) FROM (SELECT \(identifier: key) FROM \(identifier: table) WHERE \(pointsAtRows(of: entity, key)) \
                GROUP BY \(identifier: key) HAVING count(*) > 1) several
                """
        case .misfits(let entity, let attribute, let conditions):
            guard let name = column(entity, attribute) else { return nil }
            let column: SQL = "\(identifier: name)"
            let clauses = conditions.map { condition -> [SQL] in
                switch condition {
                case .missing: return ["\(column) IS NULL"]
                case .fractional: return ["\(column) <> ROUND(\(column))"]
                case .outside(let min, let max):
                    return [min.map { "\(column) < \(DatabaseValue.double($0))" }, max.map { "\(column) > \(DatabaseValue.double($0))" }].compactMap {
                        $0
                    }
                case .lengthOutside(let min, let max):
                    return [
                        min.map { "LENGTH(\(column)) < \(DatabaseValue.double($0))" }, max.map { "LENGTH(\(column)) > \(DatabaseValue.double($0))" },
                    ].compactMap { $0 }
                }
            }
            return rows(of: entity, where: clauses.filter { !$0.isEmpty }.map { $0.joined(separator: " OR ") }.joined(separator: " OR "))
        case .notMatching:
            return nil
        }
    }
}
