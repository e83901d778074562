/// The `SELECT` that loads whole objects of an entity: `Z_PK`, `Z_ENT`, `Z_OPT` and every
/// column of the entity's table, with the table aliased `t0`.
struct SelectQuery: Sendable {
    let table: EntityTable
    let dialect: any SQLDialect
    /// Column name → position in the select list.
    let columnIndex: [String: Int]
    /// The entity numbers to keep when the table also holds entities the fetch must not return.
    let entityNumbers: [Int]?

    init(table: EntityTable, schema: StoreSchema, includesSubentities: Bool = true) {
        self.table = table
        self.dialect = schema.dialect
        var index: [String: Int] = [:]
        for (offset, column) in table.allColumns.enumerated() {
            index[column.name] = offset + 3
        }
        self.columnIndex = index
        let rootNumbers = schema.table(for: table.rootEntityName)?.entityNumbers ?? []
        let wanted = includesSubentities ? table.entityNumbers : [table.entityNumber]
        entityNumbers = wanted.count == rootNumbers.count ? nil : wanted
    }

    /// `<alias>.Z_ENT IN (…)`, or `nil` when every row of the table matches.
    func entityFilter(alias: String = "t0") -> SQL? {
        entityNumbers.map { "\(identifier: alias).\(storeName: "Z_ENT") IN (\(literals: $0))" }
    }

    /// What a query selects of each row.
    enum Selection {
        /// `Z_PK`, `Z_ENT`, `Z_OPT` and every column: rows ``ManagedObjectContext/materialize(_:query:)`` reads.
        case objects
        /// `Z_PK` and `Z_ENT` only: enough for an object ID, whatever the row holds.
        case objectIDs
        /// `Z_PK`, `Z_ENT`, then these: a values fetch's columns.
        case columns([SQL])
    }

    func selectList(_ selection: Selection = .objects) -> SQL {
        let keys: [SQL] = ["t0.\(storeName: "Z_PK")", "t0.\(storeName: "Z_ENT")"]
        switch selection {
        case .objects: return (keys + ["t0.\(storeName: "Z_OPT")"] + table.allColumns.map { "t0.\(identifier: $0.name)" }).joined(separator: ", ")
        case .objectIDs: return keys.joined(separator: ", ")
        case .columns(let columns): return (keys + columns).joined(separator: ", ")
        }
    }

    /// The `SELECT` of the entity's rows that meet `condition`, its arguments with it.
    func sql(
        selecting selection: Selection = .objects,
        join: SQL = "",
        where condition: SQL?,
        orderBy: SQL?,
        limit: Int?,
        offset: Int
    ) -> SQL {
        var sql: SQL = "SELECT \(selectList(selection)) FROM \(identifier: table.name) t0"
        if !join.isEmpty { sql += " \(join)" }
        let conditions = [entityFilter(), condition].compactMap { $0 }
        if !conditions.isEmpty { sql += " WHERE \(conditions.map { "(\($0))" as SQL }.joined(separator: " AND "))" }
        if let orderBy { sql += " ORDER BY \(orderBy)" }
        if let limit { sql += " LIMIT \(literal: limit)" }
        if offset > 0 {
            if limit == nil { sql += SQL(raw: dialect.offsetWithoutLimit) }
            sql += " OFFSET \(literal: offset)"
        }
        return sql
    }
}
