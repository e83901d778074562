import Foundation

/// Applies a ``SavePlan`` on the writer connection, inside the save's transaction.
///
/// Order: check and hold the rows new foreign keys and join rows point at, allocate primary
/// keys, insert, update (optimistic locking on `Z_OPT`), delete
/// with the model's rules, keep one-to-one pairs consistent, write join rows, check
/// relationship counts. Any problem throws, and the transaction rolls back.
struct SaveExecutor {
    let connection: any DatabaseConnection
    let schema: StoreSchema
    let model: ManagedObjectModel
    var result = SaveResult()
    var issues: [ValidationError.Issue] = []
    /// The last order key given in this save, by table, order column and owner: a save that
    /// appends many rows to one owner reads the owner's last key once.
    private var lastOrderKeys: [String: Int64] = [:]

    init(connection: any DatabaseConnection, schema: StoreSchema, model: ManagedObjectModel) {
        self.connection = connection
        self.schema = schema
        self.model = model
    }

    var d: any SQLDialect { schema.dialect }
    var pk: String { d.name("Z_PK") }

    mutating func run(_ plan: SavePlan) throws -> SaveResult {
        result.primaryKeys.reserveCapacity(plan.inserts.count)
        for write in plan.inserts {
            if let key = plan.assignedKeys[write.id] { result.primaryKeys[write.id] = key }
        }
        if plan.checksDestinations { try holdDestinations(of: plan) }
        try allocatePrimaryKeys(for: plan.inserts.filter { result.primaryKeys[$0.id] == nil })
        if plan.insertsInBulk {
            try insertInBulk(plan.inserts)
        } else {
            for write in plan.inserts { try insert(write) }
        }
        for write in plan.updates { try update(write) }
        try delete(plan.deletes)
        let written = (plan.insertsInBulk ? [] : plan.inserts) + plan.updates
        for write in written { try keepOneToOnePairs(write) }
        // In the order their to-ones were set, which is the order they were added to an
        // ordered to-many, not the order they were inserted.
        if !schema.orderColumnsOfOrderedInverses.isEmpty {
            let appended = written.enumerated().sorted { lhs, rhs in
                (plan.toOneChangeOrder[lhs.element.id] ?? 0, lhs.offset) < (plan.toOneChangeOrder[rhs.element.id] ?? 0, rhs.offset)
            }
            for (_, write) in appended { try appendToOrderedInverses(write) }
        }
        for (change, add) in plan.joinChanges { try writeJoin(change, add: add) }
        for reorder in plan.reorders { try writeOrder(reorder) }
        for check in plan.countChecks where !result.deleted.contains(check.id) { try checkCount(check) }
        guard issues.isEmpty else { throw ValidationError(issues: issues) }
        return result
    }

    /// The primary key an object has or gets in this save.
    func key(of id: ObjectID) -> Int64? {
        id.primaryKey ?? result.primaryKeys[id]
    }

    // MARK: Primary keys

    private mutating func allocatePrimaryKeys(for inserts: [SavePlan.RowWrite]) throws {
        let byRoot = Dictionary(grouping: inserts) { $0.id.rootEntityName }
        for (root, writes) in byRoot.sorted(by: { $0.key < $1.key }) {
            guard let rootNumber = schema.table(for: root)?.entityNumber else { continue }
            try connection.run(
                """
                UPDATE \(storeName: "Z_PRIMARYKEY") SET \(storeName: "Z_MAX") = \(storeName: "Z_MAX") + \(writes.count) WHERE \(storeName: "Z_ENT") = \(rootNumber)
                """
            )
            guard
                let last = try connection.scalar(
                    "SELECT \(storeName: "Z_MAX") FROM \(storeName: "Z_PRIMARYKEY") WHERE \(storeName: "Z_ENT") = \(rootNumber)"
                )?.int64
            else {
                throw StoreError(.database, "Z_PRIMARYKEY has no row for \(root)", hint: "the store is damaged")
            }
            // Keys are counted on the root's row alone: Core Data leaves a sub-entity's Z_MAX 0.
            var next = last - Int64(writes.count) + 1
            for write in writes {
                result.primaryKeys[write.id] = next
                next += 1
            }
        }
    }

    // MARK: Destinations

    /// Refuses the save when a row that a new foreign key or join row points at was deleted
    /// since the context read it, and keeps it from being deleted until the commit.
    ///
    /// Core Data refuses such a save through the destination's optimistic lock (adding to its
    /// to-many changes it); an existence check does the same without making writers that
    /// add to one object's to-many (pages of one publication) refuse one another. Without it
    /// a page created while its publication is deleted would point at nothing: the delete's
    /// cascade does not see a row saved after it read the pages.
    private func holdDestinations(of plan: SavePlan) throws {
        let deleting = Set(plan.deletes)
        var keysByRoot: [String: Set<Int64>] = [:]
        var pointedAtBy: [ObjectID: (entity: String, relationship: String)] = [:]
        func note(_ destination: ObjectID?, from entity: String, by relationship: String) {
            guard let destination, let key = destination.primaryKey, !deleting.contains(destination) else { return }
            keysByRoot[destination.rootEntityName, default: []].insert(key)
            if pointedAtBy[destination] == nil { pointedAtBy[destination] = (entity, relationship) }
        }
        for write in plan.inserts + plan.updates {
            for foreignKey in write.foreignKeys { note(foreignKey.destination, from: write.entityName, by: foreignKey.relationship) }
        }
        for (change, add) in plan.joinChanges where add {
            note(change.destination, from: change.source.entityName, by: change.link.relationship)
            note(change.source, from: change.destination.entityName, by: change.link.inverseRelationship ?? change.link.relationship)
        }
        for (root, keys) in keysByRoot.sorted(by: { $0.key < $1.key }) {
            guard let table = schema.table(for: root) else { continue }
            let wanted = keys.sorted()
            var found = Set<Int64>()
            // Bounded, whatever the save holds: both engines cap a statement's arguments.
            for chunk in d.statementChunks(wanted, limit: 500) {
                let sql: SQL = """
                    SELECT \(storeName: "Z_PK") FROM \(identifier: table.name) WHERE \(storeName: "Z_PK") IN (\(list: chunk.map(DatabaseValue.integer)))\
                    \(raw: d.lockingClause(.keepingItsKey))
                    """
                for row in try connection.rows(sql) {
                    if let key = row[0].int64 { found.insert(key) }
                }
            }
            guard let missing = wanted.first(where: { !found.contains($0) }) else { continue }
            let id = pointedAtBy.keys.first { $0.rootEntityName == root && $0.primaryKey == missing }
            let from = id.flatMap { pointedAtBy[$0] }
            throw StoreError(
                .objectNotFound,
                "the \(id?.entityName ?? root) with primary key \(missing)\(from.map { ", which a \($0.entity)'s \($0.relationship) is to point at," } ?? "") no longer exists: it was deleted since it was read",
                hint: "nothing was saved; fetch it again to see whether it is still there"
            )
        }
    }

    // MARK: Rows

    private func foreignKeyValue(_ destination: ObjectID?) -> DatabaseValue {
        guard let destination, let key = key(of: destination) else { return .null }
        return .integer(key)
    }

    private mutating func insert(_ write: SavePlan.RowWrite) throws {
        guard let table = schema.table(for: write.entityName), let key = result.primaryKeys[write.id] else { return }
        let columns: [SQL] =
            ["\(storeName: "Z_PK")", "\(storeName: "Z_ENT")", "\(storeName: "Z_OPT")"]
            + (write.values.map(\.column) + write.foreignKeys.map(\.column)).map { "\(identifier: $0)" }
        let values: [DatabaseValue] =
            [.integer(key), .integer(Int64(table.entityNumber)), .integer(1)]
            + write.values.map(\.value) + write.foreignKeys.map { foreignKeyValue($0.destination) }
        try connection.run("INSERT INTO \(identifier: table.name) (\(columns.joined(separator: ", "))) VALUES (\(list: values))")
    }

    /// The inserts of each entity as one bulk insert: an entity's inserts all write the same
    /// columns (every stored attribute and to-one relationship).
    private mutating func insertInBulk(_ writes: [SavePlan.RowWrite]) throws {
        var order: [String] = []
        var byEntity: [String: [SavePlan.RowWrite]] = [:]
        for write in writes {
            if byEntity[write.entityName] == nil { order.append(write.entityName) }
            byEntity[write.entityName, default: []].append(write)
        }
        for entityName in order {
            guard let table = schema.table(for: entityName), let writes = byEntity[entityName], let first = writes.first else { continue }
            let columns = [pk, d.name("Z_ENT"), d.name("Z_OPT")] + first.values.map(\.column) + first.foreignKeys.map(\.column)
            let entityNumber = DatabaseValue.integer(Int64(table.entityNumber))
            let rows = writes.compactMap { write -> [DatabaseValue]? in
                guard let key = result.primaryKeys[write.id] else { return nil }
                return [.integer(key), entityNumber, .integer(1)] + write.values.map(\.value)
                    + write.foreignKeys.map { foreignKeyValue($0.destination) }
            }
            try connection.insertRows(into: table.name, columns: columns, rows: rows)
        }
    }

    private mutating func update(_ write: SavePlan.RowWrite) throws {
        guard let table = schema.table(for: write.entityName), let key = write.id.primaryKey else { return }
        let values = zip(
            write.values.map(\.column) + write.foreignKeys.map(\.column),
            write.values.map(\.value) + write.foreignKeys.map { foreignKeyValue($0.destination) }
        )
        let assignments =
            values.map { column, value -> SQL in "\(identifier: column) = \(value)" }
            + ["\(storeName: "Z_OPT") = \(storeName: "Z_OPT") + 1"]
        let changed = try connection.run(
            """
            UPDATE \(identifier: table.name) SET \(assignments.joined(separator: ", ")) \
            WHERE \(storeName: "Z_PK") = \(key) AND \(storeName: "Z_OPT") = \(write.expectedVersion)
            """
        )
        guard changed == 1 else {
            throw StoreError(
                .conflict,
                "\(write.id) was changed or deleted by someone else since it was read",
                hint: "fetch it again, reapply the change and save"
            )
        }
    }

    // MARK: Deleting

    /// Deletes the requested rows and, by the model's delete rules, the rows they take along.
    ///
    /// A requested row that is gone was deleted since it was read: the save is refused with
    /// ``StoreError/Code/objectNotFound``, so of two deletes of one row only one succeeds,
    /// as each would on its own. A row a cascade reaches that is gone is simply done.
    private mutating func delete(_ requested: [ObjectID]) throws {
        var queue = requested.filter { $0.primaryKey != nil }
        let requestedRows = Set(queue)
        var seen = Set(queue)
        var denied: [(id: ObjectID, entity: String, relationship: String, destinations: [ObjectID])] = []
        while !queue.isEmpty {
            let id = queue.removeFirst()
            guard let rowKey = id.primaryKey, let rootTable = schema.table(for: id.rootEntityName) else { continue }
            // Locked before its relationships are read: a writer about to point a new row at
            // it waits for this commit and then finds it gone (see `holdDestinations`), or
            // commits first and its row is among those read below.
            let number = try connection.scalar(
                """
                SELECT \(storeName: "Z_ENT") FROM \(identifier: rootTable.name) WHERE \(storeName: "Z_PK") = \(rowKey)\(raw: d.lockingClause(.forDeleting))
                """
            )?.int64
            guard let number else {
                guard !requestedRows.contains(id) else {
                    throw StoreError(
                        .objectNotFound,
                        "the \(id.entityName) with primary key \(rowKey) no longer exists: it was deleted since it was read",
                        hint: "nothing was saved; fetch it again to see whether it is still there"
                    )
                }
                continue
            }
            guard let entityName = schema.entityNames[Int(number)], let entity = model.entity(named: entityName) else { continue }
            for relationship in model.relationships(of: entity) where !relationship.isTransient {
                guard let storage = schema.storage(of: relationship, in: entity) else { continue }
                let destinations = try self.destinations(of: rowKey, via: storage, table: rootTable, relationship: relationship)
                switch relationship.deleteRule {
                case .cascade:
                    for destination in destinations where !seen.contains(destination) {
                        seen.insert(destination)
                        queue.append(destination)
                    }
                    if case .joinTable(let join, let fromSource) = storage {
                        try connection.run(
                            "DELETE FROM \(identifier: join.name) WHERE \(identifier: fromSource ? join.sourceColumn : join.destinationColumn) = \(rowKey)"
                        )
                    }
                case .nullify:
                    try nullify(rowKey, via: storage, relationship: relationship)
                case .deny:
                    if !destinations.isEmpty { denied.append((id, entityName, relationship.name, destinations)) }
                case .noAction:
                    break
                }
            }
            try connection.run("DELETE FROM \(identifier: rootTable.name) WHERE \(storeName: "Z_PK") = \(rowKey)")
            result.deleted.insert(id)
        }
        for denial in denied {
            let blocking = denial.destinations.filter { !result.deleted.contains($0) }
            guard !blocking.isEmpty else { continue }
            issues.append(
                .init(
                    code: .deleteDenied,
                    entity: denial.entity,
                    objectID: denial.id,
                    key: denial.relationship,
                    message:
                        "cannot delete while \(denial.relationship) has \(blocking.count) object\(blocking.count == 1 ? "" : "s") (delete rule Deny)"
                )
            )
        }
    }

    private func destinations(
        of key: Int64,
        via storage: RelationshipStorage,
        table: EntityTable,
        relationship: RelationshipDescription
    ) throws -> [ObjectID] {
        guard let destination = schema.table(for: relationship.destinationEntityName) else { return [] }
        func id(_ value: DatabaseValue) -> ObjectID? {
            value.int64.map { ObjectID(entityName: destination.entityName, rootEntityName: destination.rootEntityName, key: .permanent($0)) }
        }
        switch storage {
        case .foreignKey(let column):
            let value = try connection.scalar(
                "SELECT \(identifier: column) FROM \(identifier: table.name) WHERE \(storeName: "Z_PK") = \(key)"
            )
            return value.flatMap(id).map { [$0] } ?? []
        case .inverseForeignKey(let destinationTable, let column), .hiddenForeignKey(let destinationTable, let column):
            return try connection.rows(
                "SELECT \(storeName: "Z_PK") FROM \(identifier: destinationTable.name) WHERE \(identifier: column) = \(key)"
            ).compactMap { id($0[0]) }
        case .joinTable(let join, let fromSource):
            let mine = fromSource ? join.sourceColumn : join.destinationColumn
            let theirs = fromSource ? join.destinationColumn : join.sourceColumn
            return try connection.rows("SELECT \(identifier: theirs) FROM \(identifier: join.name) WHERE \(identifier: mine) = \(key)")
                .compactMap { id($0[0]) }
        }
    }

    private func nullify(_ key: Int64, via storage: RelationshipStorage, relationship: RelationshipDescription) throws {
        switch storage {
        case .inverseForeignKey(let destinationTable, let column), .hiddenForeignKey(let destinationTable, let column):
            try connection.run(
                "UPDATE \(identifier: destinationTable.name) SET \(identifier: column) = NULL WHERE \(identifier: column) = \(key)"
            )
        case .joinTable(let join, let fromSource):
            try connection.run(
                "DELETE FROM \(identifier: join.name) WHERE \(identifier: fromSource ? join.sourceColumn : join.destinationColumn) = \(key)"
            )
        case .foreignKey:
            // One-to-one: the destination points back with a foreign key of its own.
            guard let inverse = model.inverse(of: relationship), !inverse.isToMany,
                let destination = schema.table(for: relationship.destinationEntityName),
                let column = destination.column(for: inverse.name)
            else { return }
            try connection.run(
                "UPDATE \(identifier: destination.name) SET \(identifier: column.name) = NULL WHERE \(identifier: column.name) = \(key)"
            )
        }
    }

    // MARK: Relationship upkeep

    /// One-to-one relationships are stored at both ends; make the other end agree.
    private func keepOneToOnePairs(_ write: SavePlan.RowWrite) throws {
        guard let key = key(of: write.id), let entity = model.entity(named: write.entityName),
            let ownTable = schema.table(for: write.entityName)
        else { return }
        for foreignKey in write.foreignKeys {
            guard let relationship = model.relationship(named: foreignKey.relationship, of: entity),
                let inverse = model.inverse(of: relationship), !inverse.isToMany,
                let destination = schema.table(for: relationship.destinationEntityName),
                let inverseColumn = destination.column(for: inverse.name)?.name
            else { continue }
            let target = foreignKey.destination.flatMap { self.key(of: $0) }
            if let target {
                let destinationTable: SQL = "\(identifier: destination.name)"
                let inverse: SQL = "\(identifier: inverseColumn)"
                let own: SQL = "\(identifier: foreignKey.column)"
                try connection.run(
                    "UPDATE \(destinationTable) SET \(inverse) = NULL WHERE \(inverse) = \(key) AND \(storeName: "Z_PK") <> \(target)"
                )
                try connection.run("UPDATE \(destinationTable) SET \(inverse) = \(key) WHERE \(storeName: "Z_PK") = \(target)")
                try connection.run(
                    "UPDATE \(identifier: ownTable.name) SET \(own) = NULL WHERE \(own) = \(target) AND \(storeName: "Z_PK") <> \(key)"
                )
            } else {
                try connection.run(
                    "UPDATE \(identifier: destination.name) SET \(identifier: inverseColumn) = NULL WHERE \(identifier: inverseColumn) = \(key)"
                )
            }
        }
    }

    /// Writes one pair of a to-many relationship: a join table's row, or the hidden key on
    /// the destination's row. An ordered side gets the pair at its end.
    private mutating func writeJoin(_ change: ManagedObjectContext.JoinChange, add: Bool) throws {
        guard let source = key(of: change.source), let destination = key(of: change.destination) else { return }
        switch change.link {
        case .join(let table):
            guard add else {
                try connection.run(
                    """
                    DELETE FROM \(identifier: table.name) WHERE \(identifier: table.sourceColumn) = \(source) AND \(identifier: table.destinationColumn) = \(destination)
                    """
                )
                return
            }
            // A pair already there keeps its place (and needs no order key).
            if table.orderColumn != nil || table.inverseOrderColumn != nil {
                let exists =
                    try connection.scalar(
                        """
                        SELECT 1 FROM \(identifier: table.name) WHERE \(identifier: table.sourceColumn) = \(source) AND \(identifier: table.destinationColumn) = \(destination)
                        """
                    ) != nil
                guard !exists else { return }
            }
            var columns = [table.sourceColumn, table.destinationColumn]
            var values: [DatabaseValue] = [.integer(source), .integer(destination)]
            if let order = table.orderColumn {
                columns.append(order)
                values.append(.integer(try nextOrderKey(order, in: table.name, ownedBy: table.sourceColumn, key: source)))
            }
            if let order = table.inverseOrderColumn {
                columns.append(order)
                values.append(.integer(try nextOrderKey(order, in: table.name, ownedBy: table.destinationColumn, key: destination)))
            }
            try connection.run(d.insertIgnoringDuplicates(into: table.name, columns: columns, values: values))
        case .hiddenKey(let hidden):
            guard add else {
                let clearOrder: SQL = hidden.orderColumn.map { ", \(identifier: $0) = NULL" } ?? ""
                try connection.run(
                    """
                    UPDATE \(identifier: hidden.table) SET \(identifier: hidden.column) = NULL\(clearOrder) \
                    WHERE \(storeName: "Z_PK") = \(destination) AND \(identifier: hidden.column) = \(source)
                    """
                )
                return
            }
            let current = try connection.scalar(
                "SELECT \(identifier: hidden.column) FROM \(identifier: hidden.table) WHERE \(storeName: "Z_PK") = \(destination)"
            )
            guard current?.int64 != source else { return }
            var order: SQL = ""
            if let column = hidden.orderColumn {
                order = ", \(identifier: column) = \(try nextOrderKey(column, in: hidden.table, ownedBy: hidden.column, key: source))"
            }
            try connection.run(
                """
                UPDATE \(identifier: hidden.table) SET \(identifier: hidden.column) = \(source)\(order) WHERE \(storeName: "Z_PK") = \(destination)
                """
            )
        }
    }

    /// The order key of a row put at the end of one owner's ordered relationship: 1 024 after
    /// the owner's last, 2 048 for its first, as Core Data spaces them (`Z_FOK_…`).
    private mutating func nextOrderKey(
        _ column: String,
        in table: String,
        ownedBy owner: String,
        key: Int64,
        excluding row: Int64? = nil
    ) throws -> Int64 {
        let cacheKey = "\(table)|\(column)|\(key)"
        let last: Int64
        if let known = lastOrderKeys[cacheKey] {
            last = known
        } else {
            let other: SQL = row.map { " AND \(storeName: "Z_PK") <> \($0)" } ?? ""
            last =
                try connection.scalar(
                    "SELECT max(\(identifier: column)) FROM \(identifier: table) WHERE \(identifier: owner) = \(key)\(other)"
                )?.int64
                ?? Self.orderKeySpacing
        }
        let next = last + Self.orderKeySpacing
        lastOrderKeys[cacheKey] = next
        return next
    }

    /// Gives the members of an ordered relationship the keys of their positions, as Core
    /// Data spaces them (2 048, 3 072, …): a statement per 500 members.
    private mutating func writeOrder(_ reorder: OrderedMembers) throws {
        guard let owner = key(of: reorder.owner) else { return }
        let members = reorder.members.compactMap { key(of: $0) }
        var orderKey = Self.orderKeySpacing
        for chunk in d.statementChunks(members, limit: 500) {
            let cases: [SQL] = chunk.map { member in
                orderKey += Self.orderKeySpacing
                return "WHEN \(member) THEN \(orderKey)"
            }
            try connection.run(
                """
                UPDATE \(identifier: reorder.table) SET \(identifier: reorder.orderColumn) = CASE \(identifier: reorder.memberColumn) \(cases.joined(separator: " ")) END \
                WHERE \(identifier: reorder.ownerColumn) = \(owner) AND \(identifier: reorder.memberColumn) IN (\(list: chunk.map(DatabaseValue.integer)))
                """
            )
        }
        // Members not given (a migration's objects keep any) may hold later keys: read again.
        lastOrderKeys["\(reorder.table)|\(reorder.orderColumn)|\(owner)"] = nil
    }

    /// How far apart Core Data puts the order keys of an ordered relationship's members.
    static let orderKeySpacing: Int64 = 1_024

    /// Puts a row whose to-one was set at the end of the ordered to-many inverse of that
    /// to-one (a page added to a book's ordered pages), where the store keeps its order.
    private mutating func appendToOrderedInverses(_ write: SavePlan.RowWrite) throws {
        guard !schema.orderColumnsOfOrderedInverses.isEmpty, let table = schema.table(for: write.entityName), let row = key(of: write.id) else {
            return
        }
        for foreignKey in write.foreignKeys {
            guard let order = schema.orderColumnsOfOrderedInverses["\(write.entityName).\(foreignKey.relationship)"],
                let destination = foreignKey.destination, let owner = key(of: destination)
            else { continue }
            let next = try nextOrderKey(order, in: table.name, ownedBy: foreignKey.column, key: owner, excluding: row)
            try connection.run("UPDATE \(identifier: table.name) SET \(identifier: order) = \(next) WHERE \(storeName: "Z_PK") = \(row)")
        }
    }

    private mutating func checkCount(_ check: SavePlan.CountCheck) throws {
        guard let key = key(of: check.id), let entity = model.entity(named: check.entityName),
            let relationship = model.relationship(named: check.relationship, of: entity),
            let storage = schema.storage(of: relationship, in: entity)
        else { return }
        let count: Int64
        switch storage {
        case .inverseForeignKey(let table, let column), .hiddenForeignKey(let table, let column):
            count = try connection.scalar("SELECT count(*) FROM \(identifier: table.name) WHERE \(identifier: column) = \(key)")?.int64 ?? 0
        case .joinTable(let join, let fromSource):
            count =
                try connection.scalar(
                    """
                    SELECT count(*) FROM \(identifier: join.name) WHERE \(identifier: fromSource ? join.sourceColumn : join.destinationColumn) = \(key)
                    """
                )?.int64 ?? 0
        case .foreignKey:
            return
        }
        let id =
            result.primaryKeys[check.id].map {
                ObjectID(entityName: check.id.entityName, rootEntityName: check.id.rootEntityName, key: .permanent($0))
            } ?? check.id
        let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
        if count < minimum {
            issues.append(
                .init(
                    code: .tooFewObjects,
                    entity: check.entityName,
                    objectID: id,
                    key: relationship.name,
                    message: "\(relationship.name) must have at least \(minimum) object\(minimum == 1 ? "" : "s"), has \(count)"
                )
            )
        }
        if relationship.maxCount > 0, count > relationship.maxCount {
            issues.append(
                .init(
                    code: .tooManyObjects,
                    entity: check.entityName,
                    objectID: id,
                    key: relationship.name,
                    message: "\(relationship.name) must have at most \(relationship.maxCount) objects, has \(count)"
                )
            )
        }
    }
}
