extension InPlacePlanner {
    /// A change to a column kept from the source, for the rows of some entities.
    enum Fix: Hashable {
        /// Set the column (a default for rows that never had the attribute, or NULL).
        case set(DatabaseValue)
        /// Set the column where it is NULL (an attribute that became required).
        case fillNulls(DatabaseValue)
    }

    /// Turns a source root table into its destination table: each destination column either
    /// continues a source column (renamed if need be, then fixed where rows need a default)
    /// or is added and computed with one `UPDATE`. Source columns nobody continues are
    /// dropped; `Z_ENT` is renumbered last.
    mutating func planColumns(of pair: TablePair) throws(Unsupported) {
        let table = pair.sourceTable.name
        let numbers = pair.entities.compactMap { from.table(for: $0.source.name)?.entityNumber }
        let fixed = [d.name("Z_PK"), d.name("Z_ENT"), d.name("Z_OPT")]
        var names = Set(fixed + pair.sourceTable.allColumns.map(\.name))
        let destinationNames = Set(pair.destinationTable.allColumns.map(\.name))
        var claimed = Set<String>()
        var renames: [RenameOrder.Rename] = []
        var carried = Dictionary(uniqueKeysWithValues: fixed.map { ($0, $0) })

        for column in pair.destinationTable.allColumns {
            let values = pair.entities.compactMap { entity in
                from.table(for: entity.source.name).map { (number: $0.entityNumber, value: value(of: column, in: pair, for: entity)) }
            }
            let key = "\(pair.destinationTable.name).\(column.name)"
            if let carry = carryPlan(for: column, values: values, pair: pair, claimed: claimed) {
                claimed.insert(carry.column)
                carried[carry.column] = column.name
                renames.append((carry.column, column.name))
                locations[key] = (table, carry.column)
                addFixes(carry.fixes, column: carry.column, table: table, all: numbers)
                continue
            }
            // Added under a free name: the source column of that name may still be read.
            let name =
                names.contains(column.name)
                ? RenameOrder.temporaryName(for: column.name, avoiding: names.union(destinationNames)) : column.name
            names.insert(name)
            if name != column.name { renames.append((name, column.name)) }
            locations[key] = (table, name)
            add(.computeColumns, "ALTER TABLE \(identifier: table) ADD COLUMN \(identifier: name) \(raw: to.columnType(of: column))")
            addUpdate(of: name, table: table, values: values, all: numbers)
        }

        for column in pair.sourceTable.allColumns where !claimed.contains(column.name) {
            add(.dropColumns, "ALTER TABLE \(identifier: table) DROP COLUMN \(identifier: column.name)")
            names.remove(column.name)
        }
        for rename in try RenameOrder.order(renames, existing: names) {
            add(.renameColumns, "ALTER TABLE \(identifier: table) RENAME COLUMN \(identifier: rename.from) TO \(identifier: rename.to)")
        }
        let finalName = pair.destinationTable.name
        finalTableName[table] = finalName
        carriedColumns[table] = carried
        tableRenames.append((table, finalName))

        let renumbered = pair.entities.compactMap { entity -> (Int, Int)? in
            guard let old = from.table(for: entity.source.name)?.entityNumber, let new = to.table(for: entity.destination.name)?.entityNumber,
                old != new
            else { return nil }
            return (old, new)
        }
        if !renumbered.isEmpty, renumbered.count == numbers.count { rewrittenTables.insert(table) }
        if renumbered.count == 1 {
            add(
                .renumberEntities,
                "UPDATE \(identifier: finalName) SET \(storeName: "Z_ENT") = \(literal: renumbered[0].1) WHERE \(entityCondition([renumbered[0].0]))"
            )
        } else if !renumbered.isEmpty {
            let cases = renumbered.map { "WHEN \(literal: $0.0) THEN \(literal: $0.1)" as SQL }.joined(separator: " ")
            add(
                .renumberEntities,
                "UPDATE \(identifier: finalName) SET \(storeName: "Z_ENT") = CASE \(storeName: "Z_ENT") \(cases) END WHERE \(entityCondition(renumbered.map(\.0)))"
            )
        }
    }

    /// The value a destination column takes for the rows of one continued entity.
    func value(of column: Column, in pair: TablePair, for entity: (source: EntityDescription, destination: EntityDescription)) -> ColumnValue {
        switch column.kind {
        case .orderKey:
            return orderValues["\(pair.destinationTable.name).\(column.name)"] ?? .null
        case .hiddenForeignKey(let owner):
            // Only rows of the relationship's destination (or its sub-entities) have an owner.
            guard let relationship = destination.entity(named: owner).flatMap({ destination.relationship(named: column.propertyName, of: $0) }),
                let target = destination.entity(named: relationship.destinationEntityName), destination.entity(entity.destination, isKindOf: target)
            else { return .null }
            return foreignKeyValues["\(owner).\(column.propertyName)"] ?? .null
        case .entityType:
            // Kept while the data changes; set from the rows the keys name once they are
            // renumbered (``planEntityTypeColumns()``).
            return pair.sourceTable.allColumns.contains { $0.name == column.name && $0.kind == .entityType } ? .column(column.name) : .null
        default:
            break
        }
        guard let layout = to.table(for: entity.destination.name),
            let property = layout.columnsByProperty.first(where: { $0.value.name == column.name })?.key
        else {
            // Not a column of this entity (a sibling's): its rows hold NULL there.
            return .null
        }
        if let attribute = destination.attribute(named: property, of: entity.destination) {
            return attributeValue(attribute, for: entity)
        }
        guard let declaring = destination.declaringEntity(ofRelationship: property, from: entity.destination) else { return .null }
        return foreignKeyValues["\(declaring.name).\(property)"] ?? .null
    }

    /// An attribute's value: its source column (converted when the column type changes, with
    /// the default where a now-required value is missing), or its default.
    private func attributeValue(
        _ attribute: AttributeDescription,
        for entity: (source: EntityDescription, destination: EntityDescription)
    ) -> ColumnValue {
        let defaultValue = attribute.defaultValue.flatMap { value -> DatabaseValue? in
            value.isNull ? nil : d.databaseValue(value, type: attribute.type)
        }
        guard let sourceName = analysis.attributeSources[entity.destination.name]?[attribute.name],
            let sourceAttribute = source.attribute(named: sourceName, of: entity.source),
            let sourceColumn = from.table(for: entity.source.name)?.column(for: sourceName)
        else {
            return defaultValue.map(ColumnValue.constant) ?? .null
        }
        var value = ColumnValue.column(sourceColumn.name)
        let type = d.columnType(for: attribute.type)
        if d.columnType(for: sourceAttribute.type) != type {
            // The storage class changes (Float → Integer 32, Integer → Decimal): CAST, as
            // the store would have stored the converted value; a fraction is dropped, as
            // SQLite's CAST drops it.
            if d.integerCastRounds, attribute.type.integerRange != nil, [.float, .double, .decimal].contains(sourceAttribute.type) {
                value = .truncated(value)
            }
            value = .cast(value, type: type)
        }
        if !attribute.isOptional, sourceAttribute.isOptional, let defaultValue {
            value = .coalesce(value, .constant(defaultValue))
        }
        return value
    }

    /// Whether a source column can simply continue as `column`: every entity's value is that
    /// column as it stands, NULL where the entity never had it, or a fix that reads only the
    /// column itself. The same name is preferred, then the first candidate.
    private func carryPlan(
        for column: Column,
        values: [(number: Int, value: ColumnValue)],
        pair: TablePair,
        claimed: Set<String>
    )
        -> (column: String, fixes: [(Fix, Int)])?
    {
        var candidates: [String] = []
        for (_, value) in values {
            let name: String? =
                switch value {
                case .column(let name): name
                case .coalesce(.column(let name), .constant): name
                default: nil
                }
            if let name, !candidates.contains(name) { candidates.append(name) }
        }
        candidates.sort { ($0 == column.name ? 0 : 1) < ($1 == column.name ? 0 : 1) }
        let type = to.columnType(of: column)
        for candidate in candidates where !claimed.contains(candidate) {
            guard let sourceColumn = pair.sourceTable.allColumns.first(where: { $0.name == candidate }), from.columnType(of: sourceColumn) == type
            else { continue }
            var fixes: [(Fix, Int)] = []
            var fits = true
            for (number, value) in values {
                switch value {
                case .column(candidate):
                    break
                case .coalesce(.column(candidate), .constant(let fill)):
                    fixes.append((.fillNulls(fill), number))
                case .null:
                    if holds(number, candidate, in: pair) { fixes.append((.set(.null), number)) }
                case .constant(let constant):
                    fixes.append((.set(constant), number))
                default:
                    fits = false
                }
                if !fits { break }
            }
            if fits { return (candidate, fixes) }
        }
        return nil
    }

    /// Whether rows of the source entity numbered `number` can hold a value in `column`.
    private func holds(_ number: Int, _ column: String, in pair: TablePair) -> Bool {
        guard let name = from.entityNames[number], let layout = from.table(for: name) else { return false }
        if layout.columnsByProperty.values.contains(where: { $0.name == column }) { return true }
        return pair.sourceTable.allColumns.contains { $0.name == column && $0.kind == .orderKey }
    }

    /// `UPDATE`s for the fixes of a kept column, one per fix, limited to the entities needing it.
    private mutating func addFixes(_ fixes: [(Fix, Int)], column: String, table: String, all: [Int]) {
        var order: [Fix] = []
        var numbers: [Fix: [Int]] = [:]
        for (fix, number) in fixes {
            if numbers[fix] == nil { order.append(fix) }
            numbers[fix, default: []].append(number)
        }
        for fix in order {
            let entities = numbers[fix] ?? []
            let limited = Set(entities) == Set(all) ? nil : entityCondition(entities)
            switch fix {
            case .set(let value):
                let sql: SQL = "UPDATE \(identifier: table) SET \(identifier: column) = \(ColumnValue.constant(value).sql(table: table))"
                add(.fixValues, sql + (limited.map { " WHERE \($0)" } ?? ""))
            case .fillNulls(let value):
                let sql: SQL =
                    "UPDATE \(identifier: table) SET \(identifier: column) = \(ColumnValue.constant(value).sql(table: table)) WHERE \(identifier: column) IS NULL"
                add(.fixValues, sql + (limited.map { " AND \($0)" } ?? ""))
            }
        }
    }

    /// The `UPDATE` filling an added column: one value for all rows, or a `CASE` on `Z_ENT`.
    private mutating func addUpdate(of column: String, table: String, values: [(number: Int, value: ColumnValue)], all: [Int]) {
        var order: [ColumnValue] = []
        var numbers: [ColumnValue: [Int]] = [:]
        for (number, value) in values where value != .null && value != .deferred {
            if numbers[value] == nil { order.append(value) }
            numbers[value, default: []].append(number)
        }
        guard !order.isEmpty else { return }
        let expression: SQL
        if order.count == 1 {
            expression = order[0].sql(table: table)
        } else {
            let cases = order.map { value -> SQL in "WHEN \(entityCondition(numbers[value] ?? [])) THEN \(value.sql(table: table))" }
            expression = "CASE \(cases.joined(separator: " ")) END"
        }
        let entities = order.flatMap { numbers[$0] ?? [] }
        let limited: SQL = Set(entities) == Set(all) ? "" : " WHERE \(entityCondition(entities))"
        add(.computeColumns, "UPDATE \(identifier: table) SET \(identifier: column) = \(expression)\(limited)" as SQL)
    }

    /// Fills the derived side of each one-to-one from the leading side's final values, then
    /// clears leading keys whose partner chose another row, so both sides agree.
    mutating func linkOneToOnePairs() {
        let pk: SQL = "\(storeName: "Z_PK")"
        for (primary, secondary) in oneToOnePairs {
            guard let primaryColumn = location(of: primary), let secondaryColumn = location(of: secondary) else { continue }
            let (leadTable, lead) = primaryColumn
            let (table, column) = secondaryColumn
            let (leadTableName, leadName, tableName, columnName): (SQL, SQL, SQL, SQL) = (
                "\(identifier: leadTable)", "\(identifier: lead)", "\(identifier: table)", "\(identifier: column)"
            )
            var sql: SQL =
                "UPDATE \(tableName) SET \(columnName) = (SELECT min(p.\(pk)) FROM \(leadTableName) p WHERE p.\(leadName) = \(tableName).\(pk))"
            if let pair = tablePairs.first(where: { $0.sourceTable.name == table }) {
                let all = pair.entities.compactMap { from.table(for: $0.source.name)?.entityNumber }
                let kinds = pair.entities.filter { destination.entity($0.destination, isKindOf: secondary.entity) }
                    .compactMap { from.table(for: $0.source.name)?.entityNumber }
                if Set(kinds) != Set(all) { sql += " WHERE \(entityCondition(kinds))" }
            }
            add(.linkOneToOne, sql)
            add(
                .linkOneToOne,
                """
                UPDATE \(leadTableName) SET \(leadName) = NULL WHERE \(leadName) IS NOT NULL AND NOT EXISTS \
                (SELECT 1 FROM \(tableName) s WHERE s.\(pk) = \(leadTableName).\(leadName) AND s.\(columnName) = \(leadTableName).\(pk))
                """
            )
        }
    }

    /// Where a to-one's foreign key is while the data changes.
    private func location(of side: Side) -> (table: String, column: String)? {
        guard let layout = to.table(for: side.entity.name), let column = layout.column(for: side.relationship.name) else { return nil }
        return locations["\(layout.name).\(column.name)"]
    }
}
