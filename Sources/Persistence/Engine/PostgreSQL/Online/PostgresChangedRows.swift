/// The rows a catch-up round migrates again, and the rows their migration reads: what the
/// round's store holds.
///
/// A change names a row of an entity table (its key), a row of a join table (its two keys,
/// each then a changed row of its side), or a row a changed row points at or pointed at
/// through a to-one relationship (``PostgresChangeCapture/Change/Kind/related``, recorded by
/// the capture's trigger with the change). A mapping may read an object's relationships
/// one step deep (`$source.publication.title`, `$source.pages.@count`), so the objects
/// migrated again (``merged``) are the changed ones, the rows pointing at them and their
/// many-to-many partners: every object whose view one relationship deep a change touched
/// (a page deleted or moved recorded the publication it left as related). The round's store
/// holds, of the store's state now, those rows, the rows one relationship away from them
/// (what their migration reads) and every row those reach through to-one relationships
/// (what validation follows); the others' results are not used.
///
/// ```swift
/// var rows = PostgresChangedRows(changes: changes, source: storeLayout)
/// try rows.reach(from: "bookstore", on: connection)
/// try rows.write(into: "bookstore_migrating_5e6f7a8b", from: "bookstore", tables: contents.storeTables, on: connection)
/// ```
struct PostgresChangedRows: Sendable {
    /// A to-one relationship's column in the root table `table`: its rows point at rows of
    /// the root table `target`.
    struct Edge: Sendable, Hashable {
        let table: String
        let column: String
        let target: String
    }

    /// A join table, its columns and the key sets of its two sides.
    struct Join: Sendable, Hashable {
        let table: String
        let sourceColumn: String
        let sourceSet: String
        let destinationColumn: String
        let destinationSet: String
    }

    /// A layout's relationships between its root tables, named as in its schema.
    struct Relationships: Sendable {
        var edges: [Edge] = []
        var joins: [Join] = []

        init(_ layout: StoreSchema) {
            let d = layout.dialect
            func root(of entity: String) -> String? {
                layout.table(for: entity).flatMap { layout.table(for: $0.rootEntityName) }.map { d.name($0.name) }
            }
            for table in layout.rootTables {
                for column in table.allColumns {
                    // A to-one's key, or Core Data's hidden key of a to-many without an inverse
                    // (its rows point at their owner).
                    let pointsAt: String? =
                        switch column.kind {
                        case .foreignKey(let destination): destination
                        case .hiddenForeignKey(let source): source
                        default: nil
                        }
                    guard let pointsAt, let target = root(of: pointsAt) else { continue }
                    edges.append(Edge(table: d.name(table.name), column: d.name(column.name), target: target))
                }
            }
            for join in layout.allJoinTables {
                guard let sourceSet = root(of: join.sourceEntity), let destinationSet = root(of: join.destinationEntity) else { continue }
                joins.append(
                    Join(
                        table: d.name(join.name),
                        sourceColumn: d.name(join.sourceColumn),
                        sourceSet: sourceSet,
                        destinationColumn: d.name(join.destinationColumn),
                        destinationSet: destinationSet
                    )
                )
            }
        }
    }

    /// Per root table of the store: the keys changes named.
    private(set) var changed: [String: Set<Int64>] = [:]
    /// Per root table of the store: the keys migrated again and merged (the changed ones
    /// and the ones a relationship away).
    private(set) var merged: [String: Set<Int64>] = [:]
    /// Per root table of the store: the keys the round's store holds.
    private(set) var reached: [String: Set<Int64>] = [:]
    /// The store's relationships.
    let store: Relationships
    /// The store's root tables, named as in the store.
    let rootTables: Set<String>

    /// The rows `changes` name, in the layout of the store's version `source`.
    init(changes: [PostgresChangeCapture.Change], source: StoreSchema) {
        let d = source.dialect
        rootTables = Set(source.rootTables.map { d.name($0.name) })
        store = Relationships(source)
        let joinsByName = Dictionary(store.joins.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        for change in changes {
            if let join = joinsByName[change.table], change.keys.count == 2 {
                changed[join.sourceSet, default: []].insert(change.keys[0])
                changed[join.destinationSet, default: []].insert(change.keys[1])
            } else if let key = change.keys.first {
                changed[change.table, default: []].insert(key)
            }
        }
        merged = changed
        reached = changed
    }

    /// Finds the rows migrated again and the rows their migration reads (see the type's
    /// description). Run it in the transaction that writes the round's store, so both see
    /// one snapshot.
    mutating func reach(from storeSchema: String, on connection: any DatabaseConnection) throws {
        // The rows a changed row points at were recorded with the change, before and after.
        Self.add(try Self.hop(from: changed, in: storeSchema, via: store, pointedAt: false, on: connection), to: &merged)
        reached = merged
        Self.add(try Self.hop(from: merged, in: storeSchema, via: store, pointedAt: true, on: connection), to: &reached)
        // Then every to-one relationship, as far as it leads: each round follows the rows
        // the one before added.
        let schema = storeSchema.quotedIdentifier
        var frontier = reached
        while !frontier.isEmpty {
            var next: [String: Set<Int64>] = [:]
            for edge in store.edges {
                guard let keys = frontier[edge.table], !keys.isEmpty else { continue }
                let targets = try Self.keys(
                    """
                    SELECT DISTINCT \(edge.column.quotedIdentifier) FROM \(schema).\(edge.table.quotedIdentifier) \
                    WHERE z_pk = ANY($1::bigint[]) AND \(edge.column.quotedIdentifier) IS NOT NULL
                    """,
                    keys,
                    on: connection
                )
                let new = targets.subtracting(reached[edge.target] ?? [])
                if !new.isEmpty {
                    reached[edge.target, default: []].formUnion(new)
                    next[edge.target, default: []].formUnion(new)
                }
            }
            frontier = next
        }
    }

    /// The rows one relationship away from `keys` in `schema`: the rows pointing at them,
    /// their many-to-many partners, and (`pointedAt`) the rows they point at.
    private static func hop(
        from keys: [String: Set<Int64>],
        in schema: String,
        via relationships: Relationships,
        pointedAt: Bool,
        on connection: any DatabaseConnection
    ) throws -> [String: Set<Int64>] {
        let schema = schema.quotedIdentifier
        var found: [String: Set<Int64>] = [:]
        for edge in relationships.edges {
            let (table, column) = (edge.table.quotedIdentifier, edge.column.quotedIdentifier)
            if let targets = keys[edge.target], !targets.isEmpty {
                found[edge.table, default: []].formUnion(
                    try self.keys("SELECT z_pk FROM \(schema).\(table) WHERE \(column) = ANY($1::bigint[])", targets, on: connection)
                )
            }
            if pointedAt, let owners = keys[edge.table], !owners.isEmpty {
                found[edge.target, default: []].formUnion(
                    try self.keys(
                        "SELECT DISTINCT \(column) FROM \(schema).\(table) WHERE z_pk = ANY($1::bigint[]) AND \(column) IS NOT NULL",
                        owners,
                        on: connection
                    )
                )
            }
        }
        for join in relationships.joins {
            let (table, sourceColumn, destinationColumn) = (
                join.table.quotedIdentifier, join.sourceColumn.quotedIdentifier, join.destinationColumn.quotedIdentifier
            )
            if let sources = keys[join.sourceSet], !sources.isEmpty {
                found[join.destinationSet, default: []].formUnion(
                    try self.keys(
                        "SELECT \(destinationColumn) FROM \(schema).\(table) WHERE \(sourceColumn) = ANY($1::bigint[])",
                        sources,
                        on: connection
                    )
                )
            }
            if let destinations = keys[join.destinationSet], !destinations.isEmpty {
                found[join.sourceSet, default: []].formUnion(
                    try self.keys(
                        "SELECT \(sourceColumn) FROM \(schema).\(table) WHERE \(destinationColumn) = ANY($1::bigint[])",
                        destinations,
                        on: connection
                    )
                )
            }
        }
        return found
    }

    private static func add(_ keys: [String: Set<Int64>], to sets: inout [String: Set<Int64>]) {
        for (table, keys) in keys where !keys.isEmpty { sets[table, default: []].formUnion(keys) }
    }

    /// The largest key the round's store holds.
    var largestReachedKey: Int64 { reached.values.compactMap { $0.max() }.max() ?? 0 }

    /// Creates the round's store in `roundSchema`: each of the store's `tables` alike, with
    /// the reached rows of the root tables, the join rows between reached rows, and every
    /// row of Core Data's own tables (metadata, key counters).
    func write(into roundSchema: String, from storeSchema: String, tables: [String], on connection: any DatabaseConnection) throws {
        let (round, store) = (roundSchema.quotedIdentifier, storeSchema.quotedIdentifier)
        try connection.execute(rawSQL: "CREATE SCHEMA \(round)")
        let joinsByName = Dictionary(self.store.joins.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        for table in tables {
            let name = table.quotedIdentifier
            try connection.execute(rawSQL: "CREATE TABLE \(round).\(name) (LIKE \(store).\(name) INCLUDING ALL)")
            if let join = joinsByName[table] {
                try connection.run(
                    rawSQL: """
                        INSERT INTO \(round).\(name) SELECT * FROM \(store).\(name) \
                        WHERE \(join.sourceColumn.quotedIdentifier) = ANY($1::bigint[]) AND \(join.destinationColumn.quotedIdentifier) = ANY($2::bigint[])
                        """,
                    [Self.array(reached[join.sourceSet] ?? []), Self.array(reached[join.destinationSet] ?? [])]
                )
            } else if rootTables.contains(table) {
                try connection.run(
                    rawSQL: "INSERT INTO \(round).\(name) SELECT * FROM \(store).\(name) WHERE z_pk = ANY($1::bigint[])",
                    [Self.array(reached[table] ?? [])]
                )
            } else {
                try connection.execute(rawSQL: "INSERT INTO \(round).\(name) SELECT * FROM \(store).\(name)")
            }
        }
    }

    private static func keys(_ sql: String, _ keys: Set<Int64>, on connection: any DatabaseConnection) throws -> Set<Int64> {
        Set(try connection.rows(rawSQL: sql, [array(keys)]).compactMap { $0[0].int64 })
    }

    /// Keys as a `bigint[]` argument, in PostgreSQL's text form of an array.
    static func array(_ keys: Set<Int64>) -> DatabaseValue {
        .text("{" + keys.sorted().map(String.init).joined(separator: ",") + "}")
    }
}
