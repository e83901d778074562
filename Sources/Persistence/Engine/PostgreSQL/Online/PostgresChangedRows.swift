/// The rows a catch-up round migrates again, and the rows their migration reads: what the
/// round's store holds.
///
/// A change names a row of an entity table (its key) or of a join table (its two keys,
/// each then a changed row of its side). The round's store holds, of the store's state
/// now, every changed row that still exists, the rows that point at one (their to-many
/// relationships hold it), the partners of its many-to-many relationships, and every row
/// those reach through to-one relationships, so that each changed row is migrated with all
/// it relates to; the others' results are not used.
///
/// ```swift
/// var rows = PostgresChangedRows(changes: changes, source: schema)
/// try rows.reach(from: "bookstore", on: connection)
/// try rows.write(into: "bookstore_migrating_1a2b3c4d", from: "bookstore", tables: contents.storeTables, on: connection)
/// ```
struct PostgresChangedRows: Sendable {
    /// A to-one relationship's column: rows of `table` point at rows of `target` (root tables).
    struct Edge: Sendable, Hashable {
        let table: String
        let column: String
        let target: String
    }

    /// A join table and the root tables of its two sides.
    struct Join: Sendable, Hashable {
        let table: String
        let sourceColumn: String
        let sourceTable: String
        let destinationColumn: String
        let destinationTable: String
    }

    /// Per root table of the store: the keys changes named.
    private(set) var changed: [String: Set<Int64>] = [:]
    /// Per root table of the store: the keys the round's store holds (the changed ones too).
    private(set) var reached: [String: Set<Int64>] = [:]
    let edges: [Edge]
    let joins: [Join]
    /// The model's root tables, named as in the store.
    let rootTables: Set<String>

    /// The rows `changes` name, in the layout of the store's version `source`.
    init(changes: [PostgresChangeCapture.Change], source: StoreSchema) {
        let d = source.dialect
        func rootTable(of entity: String) -> String? {
            guard let table = source.table(for: entity) else { return nil }
            return source.table(for: table.rootEntityName).map { d.name($0.name) }
        }
        rootTables = Set(source.rootTables.map { d.name($0.name) })
        edges = source.rootTables.flatMap { table in
            table.allColumns.compactMap { column -> Edge? in
                guard case .foreignKey(let destination) = column.kind, let target = rootTable(of: destination) else { return nil }
                return Edge(table: d.name(table.name), column: d.name(column.name), target: target)
            }
        }
        joins = source.allJoinTables.compactMap { join in
            guard let sourceTable = rootTable(of: join.sourceEntity), let destinationTable = rootTable(of: join.destinationEntity) else { return nil }
            return Join(table: d.name(join.name), sourceColumn: d.name(join.sourceColumn), sourceTable: sourceTable,
                        destinationColumn: d.name(join.destinationColumn), destinationTable: destinationTable)
        }
        let joinsByName = Dictionary(joins.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        for change in changes {
            if let join = joinsByName[change.table], change.keys.count == 2 {
                changed[join.sourceTable, default: []].insert(change.keys[0])
                changed[join.destinationTable, default: []].insert(change.keys[1])
            } else if let key = change.keys.first {
                changed[change.table, default: []].insert(key)
            }
        }
        reached = changed
    }

    /// Finds, in the store's state now, the rows the changed ones relate to (see the type's
    /// description). Run it in the transaction that writes the round's store, so both see
    /// one snapshot.
    mutating func reach(from storeSchema: String, on connection: any DatabaseConnection) throws {
        let schema = Self.quote(storeSchema)
        // One step out: rows pointing at changed rows, and many-to-many partners.
        for edge in edges {
            guard let keys = changed[edge.target], !keys.isEmpty else { continue }
            add(try Self.keys("SELECT z_pk FROM \(schema).\(Self.quote(edge.table)) WHERE \(Self.quote(edge.column)) = ANY($1::bigint[])", keys, on: connection),
                to: edge.table)
        }
        for join in joins {
            if let keys = changed[join.sourceTable], !keys.isEmpty {
                add(try Self.keys("SELECT \(Self.quote(join.destinationColumn)) FROM \(schema).\(Self.quote(join.table)) WHERE \(Self.quote(join.sourceColumn)) = ANY($1::bigint[])",
                                  keys, on: connection), to: join.destinationTable)
            }
            if let keys = changed[join.destinationTable], !keys.isEmpty {
                add(try Self.keys("SELECT \(Self.quote(join.sourceColumn)) FROM \(schema).\(Self.quote(join.table)) WHERE \(Self.quote(join.destinationColumn)) = ANY($1::bigint[])",
                                  keys, on: connection), to: join.sourceTable)
            }
        }
        // Then every to-one relationship, as far as it leads: each round follows the rows
        // the one before added.
        var frontier = reached
        while !frontier.isEmpty {
            var next: [String: Set<Int64>] = [:]
            for edge in edges {
                guard let keys = frontier[edge.table], !keys.isEmpty else { continue }
                let targets = try Self.keys("""
                    SELECT DISTINCT \(Self.quote(edge.column)) FROM \(schema).\(Self.quote(edge.table)) \
                    WHERE z_pk = ANY($1::bigint[]) AND \(Self.quote(edge.column)) IS NOT NULL
                    """, keys, on: connection)
                let new = targets.subtracting(reached[edge.target] ?? [])
                if !new.isEmpty {
                    add(new, to: edge.target)
                    next[edge.target, default: []].formUnion(new)
                }
            }
            frontier = next
        }
    }

    private mutating func add(_ keys: Set<Int64>, to table: String) {
        guard !keys.isEmpty else { return }
        reached[table, default: []].formUnion(keys)
    }

    /// Creates the round's store in `roundSchema`: each of the store's `tables` alike, with
    /// the reached rows of the root tables, the join rows between reached rows, and every
    /// row of Core Data's own tables (metadata, key counters).
    func write(into roundSchema: String, from storeSchema: String, tables: [String], on connection: any DatabaseConnection) throws {
        let (round, store) = (Self.quote(roundSchema), Self.quote(storeSchema))
        try connection.execute("CREATE SCHEMA \(round)")
        let joinsByName = Dictionary(joins.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        for table in tables {
            let name = Self.quote(table)
            try connection.execute("CREATE TABLE \(round).\(name) (LIKE \(store).\(name) INCLUDING ALL)")
            if let join = joinsByName[table] {
                try connection.run("""
                    INSERT INTO \(round).\(name) SELECT * FROM \(store).\(name) \
                    WHERE \(Self.quote(join.sourceColumn)) = ANY($1::bigint[]) AND \(Self.quote(join.destinationColumn)) = ANY($2::bigint[])
                    """, [Self.array(reached[join.sourceTable] ?? []), Self.array(reached[join.destinationTable] ?? [])])
            } else if rootTables.contains(table) {
                try connection.run("INSERT INTO \(round).\(name) SELECT * FROM \(store).\(name) WHERE z_pk = ANY($1::bigint[])",
                                   [Self.array(reached[table] ?? [])])
            } else {
                try connection.execute("INSERT INTO \(round).\(name) SELECT * FROM \(store).\(name)")
            }
        }
    }

    private static func keys(_ sql: String, _ keys: Set<Int64>, on connection: any DatabaseConnection) throws -> Set<Int64> {
        Set(try connection.rows(sql, [array(keys)]).compactMap { $0[0].int64 })
    }

    /// Keys as a `bigint[]` argument, in PostgreSQL's text form of an array.
    static func array(_ keys: Set<Int64>) -> DatabaseValue {
        .text("{" + keys.sorted().map(String.init).joined(separator: ",") + "}")
    }

    static func quote(_ name: String) -> String {
        PostgresConfiguration.quoteIdentifier(name)
    }
}
