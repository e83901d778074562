extension InPlacePlanner {
    /// Plans every destination relationship, one inverse pair at a time: the values of its
    /// foreign keys, its join table, and the clearing of links to rows that no longer fit.
    ///
    /// Primary keys do not change, so a source pair (`page 7` → `book 3`) is a valid
    /// destination pair as it is; what changes is where pairs are stored. A to-one keeps
    /// its foreign key, or gets the smallest key of what its source to-many held; a new
    /// many-to-many is filled from the source's foreign keys.
    mutating func planRelationships() throws(Unsupported) {
        var done = Set<String>()
        var uses: [String: Int] = [:]
        var cleared = Set<String>()
        for entity in destination.entities {
            for relationship in entity.relationships where !relationship.isTransient {
                let side = Side(entity: entity, relationship: relationship)
                guard !done.contains(side.key) else { continue }
                done.insert(side.key)
                var other: Side?
                if let inverse = destination.inverse(of: relationship), let target = destination.entity(named: relationship.destinationEntityName),
                    let declaring = destination.declaringEntity(ofRelationship: inverse.name, from: target)
                {
                    let candidate = Side(entity: declaring, relationship: inverse)
                    if candidate.key != side.key {
                        other = candidate
                        done.insert(candidate.key)
                    }
                }
                let links = try planPair(side, other)
                for link in links {
                    uses[link.identity, default: 0] += 1
                    if clearInvalidLinks(link, side: side) { cleared.insert(link.identity) }
                }
            }
        }
        // Clearing a link changes source data; another relationship reading it would lose pairs.
        if let shared = cleared.sorted().first(where: { (uses[$0] ?? 0) > 1 }) {
            throw Unsupported("the pairs stored in \(shared) feed several relationships, and some of them no longer fit")
        }
        for join in from.allJoinTables where !claimedJoinTables.contains(join.name) {
            dropTable(join.name)
        }
    }

    /// Plans one relationship and its inverse; returns the source links it reads.
    private mutating func planPair(_ a: Side, _ b: Side?) throws(Unsupported) -> [SourceLink] {
        let ownA = try sourceLink(for: a)
        let ownB = try b.flatMap { side throws(Unsupported) in try sourceLink(for: side) }
        if let ownA, let ownB, let b {
            // Both sides name a source relationship: they must have been each other's inverse.
            let sourceA = source.entity(named: ownA.declaring).flatMap { source.relationship(named: ownA.relationship, of: $0) }
            let inverse = sourceA.flatMap { source.inverse(of: $0) }
            let inverseOwner = sourceA.flatMap { source.entity(named: $0.destinationEntityName) }.flatMap { target in
                inverse.flatMap { source.declaringEntity(ofRelationship: $0.name, from: target) }
            }
            guard inverse?.name == ownB.relationship, inverseOwner?.name == ownB.declaring else {
                throw Unsupported("\(a.key) and \(b.key) come from source relationships that were not each other's inverse")
            }
        }
        // The pairs seen from a's side, whichever side named them.
        let linkA = ownA?.link ?? ownB?.link.reversed
        let linkB = ownB?.link ?? ownA?.link.reversed
        let aToOne = !a.relationship.isToMany
        let bToOne = b.map { !$0.relationship.isToMany } ?? false

        if aToOne { foreignKeyValues[a.key] = foreignKeyValue(linkA) }
        if let b, bToOne { foreignKeyValues[b.key] = foreignKeyValue(linkB) }
        if aToOne, let b, bToOne {
            planOneToOne(a, b)
        }
        if aToOne || bToOne {
            if let order = orderColumnValue(a, b, link: linkA) {
                orderValues[order.key] = order.value
            }
        } else if b == nil, case .hiddenForeignKey(let table, _)? = to.storage(of: a.relationship, in: a.entity) {
            planHiddenKey(a, table: table, orderColumn: to.orderColumn(of: a.relationship, in: a.entity), link: linkA)
        } else {
            try planJoinTable(a, b, link: linkA)
        }
        var links: [SourceLink] = []
        for link in [ownA?.link, ownB?.link.reversed].compactMap({ $0 }) where !links.contains(where: { $0.identity == link.identity }) {
            links.append(link)
        }
        return links
    }

    /// A to-one's foreign key: the source column as it is when the source kept the pair in a
    /// foreign key on this side, else the smallest linked key.
    private func foreignKeyValue(_ link: SourceLink?) -> ColumnValue {
        guard let link else { return .null }
        if case .foreignKey(.own, _, let column) = link.storage { return .column(column) }
        return .firstLinked(link)
    }

    /// Both sides of a one-to-one store the pair. When the source did not keep it as a
    /// one-to-one, one side is computed and the other derived from it afterwards, so the two
    /// always agree (each row at most one partner).
    private mutating func planOneToOne(_ a: Side, _ b: Side) {
        let valueA = foreignKeyValues[a.key] ?? .null
        let valueB = foreignKeyValues[b.key] ?? .null
        if valueA.plainColumn != nil && valueB.plainColumn != nil { return }
        if valueA == .null && valueB == .null { return }
        let aLeads = valueA.plainColumn != nil || (valueB.plainColumn == nil && valueA != .null)
        let (primary, secondary) = aLeads ? (a, b) : (b, a)
        foreignKeyValues[secondary.key] = .deferred
        oneToOnePairs.append((primary, secondary))
    }

    /// The ordering column of an ordered one-to-many (`ZPAGE.Z_FOK_BOOK`) and its value: the
    /// source's ordering column when the source ordered the same pairs, else NULL (the
    /// framework orders by it, then by `Z_PK`).
    private func orderColumnValue(_ a: Side, _ b: Side?, link: SourceLink?) -> (key: String, value: ColumnValue)? {
        let (many, one) = a.relationship.isToMany ? (Optional(a), b) : (b, Optional(a))
        guard let many, let one, many.relationship.isOrdered, many.relationship.isToMany, !one.relationship.isToMany,
            let table = to.table(for: one.entity.name),
            let column = table.allColumns.first(where: { $0.kind == .orderKey && $0.propertyName == many.relationship.name })
        else { return nil }
        let key = "\(table.name).\(column.name)"
        // The source's ordering column lives on the table of the foreign key it orders.
        guard let link, case .foreignKey(_, let linkTable, _) = link.storage,
            let sourceName = analysis.relationshipSources[many.entity.name]?[many.relationship.name],
            let sourceTable = from.rootTables.first(where: { $0.name == linkTable }),
            let sourceColumn = sourceTable.allColumns.first(where: { $0.kind == .orderKey && $0.propertyName == sourceName })
        else { return (key, .null) }
        return (key, .column(sourceColumn.name))
    }

    /// Core Data's hidden key of a to-many without an inverse, on the destination's rows: the
    /// owner each row is linked to (the smallest, where the source linked it to several), and
    /// its place among the owner's when the relationship is ordered and the source kept one.
    private mutating func planHiddenKey(_ side: Side, table: EntityTable, orderColumn: String?, link: SourceLink?) {
        // Seen from the destination's rows.
        let fromRows = link?.reversed
        foreignKeyValues[side.key] = foreignKeyValue(fromRows)
        guard let orderColumn, let fromRows else { return }
        let order: ColumnValue
        switch fromRows.storage {
        case .foreignKey(.own, _, _):
            order = fromRows.keyOrderColumn.map(ColumnValue.column) ?? .null
        case .join(_, _, _, let joinOrder?, _, false):
            // The join table's order column orders the owner's destinations.
            order = .firstLinkedOrder(fromRows, column: joinOrder)
        default:
            order = .null
        }
        orderValues["\(table.name).\(orderColumn)"] = order
    }

    // MARK: Join tables

    /// A destination join table continues a source join table that stores the same pairs
    /// the same way round (renamed as entity numbers and names require); otherwise it is
    /// created and filled with `INSERT … SELECT` from wherever the source kept the pairs.
    private mutating func planJoinTable(_ a: Side, _ b: Side?, link: SourceLink?) throws(Unsupported) {
        guard let join = to.joinTable(entity: a.entity.name, relationship: a.relationship.name) else {
            throw Unsupported("\(a.key) has no join table in the destination layout")
        }
        let fromSourceSide = join.sourceEntity == a.entity.name && join.relationship == a.relationship.name
        guard let link = fromSourceSide ? link : link?.reversed else {
            add(.createTables, to.createTableStatement(for: join))
            return
        }
        if case let .join(table, own, other, order, inverseOrder, ownIsSource) = link.storage, ownIsSource, !claimedJoinTables.contains(table) {
            claimedJoinTables.insert(table)
            var renames: [RenameOrder.Rename] = [(own, join.sourceColumn), (other, join.destinationColumn)]
            var columns = [own: join.sourceColumn, other: join.destinationColumn]
            var names: Set<String> = [own, other]
            // Each side's order column continues, goes or is added empty.
            for (order, destinationOrder) in [(order, join.orderColumn), (inverseOrder, join.inverseOrderColumn)] {
                switch (order, destinationOrder) {
                case let (order?, destinationOrder?):
                    renames.append((order, destinationOrder))
                    columns[order] = destinationOrder
                    names.insert(order)
                case let (order?, nil):
                    add(.dropColumns, "ALTER TABLE \(identifier: table) DROP COLUMN \(identifier: order)")
                case let (nil, destinationOrder?):
                    add(.createTables, "ALTER TABLE \(identifier: join.name) ADD COLUMN \(identifier: destinationOrder) \(raw: d.keyColumnType)")
                case (nil, nil):
                    break
                }
            }
            for rename in try RenameOrder.order(renames, existing: names) {
                add(.renameColumns, "ALTER TABLE \(identifier: table) RENAME COLUMN \(identifier: rename.from) TO \(identifier: rename.to)")
            }
            finalTableName[table] = join.name
            carriedColumns[table] = columns
            tableRenames.append((table, join.name))
            return
        }
        // Created under a free name while the source tables still exist; renamed at the end.
        let name = tableNames.contains(join.name) ? RenameOrder.temporaryName(for: join.name, avoiding: tableNames) : join.name
        tableNames.insert(name)
        if name != join.name { tableRenames.append((name, join.name)) }
        add(.fillJoinTables, to.createTableStatement(for: join, named: name))
        let pk: SQL = "\(storeName: "Z_PK")"
        var columns = [join.sourceColumn, join.destinationColumn]
        let select: SQL
        // The own end is the table's owner. A key on the owner's rows came from a to-one whose
        // inverse, the other end, was the to-many: its order orders the owners among the
        // other's; a key on the other's rows, the reverse.
        switch link.storage {
        case let .foreignKey(.own, table, column):
            if let order = link.keyOrderColumn, let destinationOrder = join.inverseOrderColumn {
                columns.append(destinationOrder)
                select = "SELECT \(pk), \(identifier: column), \(identifier: order) FROM \(identifier: table) WHERE \(identifier: column) IS NOT NULL"
            } else {
                select = "SELECT \(pk), \(identifier: column) FROM \(identifier: table) WHERE \(identifier: column) IS NOT NULL"
            }
        case let .foreignKey(.other, table, column):
            if let order = link.keyOrderColumn, let destinationOrder = join.orderColumn {
                columns.append(destinationOrder)
                select = "SELECT \(identifier: column), \(pk), \(identifier: order) FROM \(identifier: table) WHERE \(identifier: column) IS NOT NULL"
            } else {
                select = "SELECT \(identifier: column), \(pk) FROM \(identifier: table) WHERE \(identifier: column) IS NOT NULL"
            }
        case let .join(table, own, other, order, inverseOrder, ownIsSource):
            // The source's order of the other end among the own end's (the destination's
            // order column), and the reverse: which is which depends on which end owned it.
            let (ordersOther, ordersOwn) = ownIsSource ? (order, inverseOrder) : (inverseOrder, order)
            var selected = [own, other]
            for (sourceOrder, destinationOrder) in [(ordersOther, join.orderColumn), (ordersOwn, join.inverseOrderColumn)] {
                guard let sourceOrder, let destinationOrder else { continue }
                columns.append(destinationOrder)
                selected.append(sourceOrder)
            }
            select = "SELECT \(selected.map { "\(identifier: $0)" as SQL }.joined(separator: ", ")) FROM \(identifier: table)"
        }
        add(.fillJoinTables, "INSERT INTO \(identifier: name) (\(columns.map { "\(identifier: $0)" as SQL }.joined(separator: ", "))) \(select)")
    }
}
