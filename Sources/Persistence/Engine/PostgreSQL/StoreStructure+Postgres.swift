extension StoreStructure {
    /// Reads the structure of the PostgreSQL store in the connection's schema (its
    /// `search_path`, where the store's connections keep it); only reads. Names are as the
    /// store keeps them, in lower case (`zpublication`, `z_1tags`), as a schema laid out for
    /// PostgreSQL (``StoreSchema`` with the PostgreSQL dialect) names them.
    ///
    /// - Throws: ``DatabaseError`` when the catalogue or `z_primarykey` cannot be read.
    static func readPostgres(from connection: any DatabaseConnection) throws -> StoreStructure {
        var tables: [String: [String: TypeClass]] = [:]
        var joins: [String: Set<String>] = [:]
        var others: Set<String> = []
        let columns = try connection.rows(
            rawSQL: """
                SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod)
                FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
                JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY 1, a.attnum
                """
        )
        var exactTypes: [String: [String: String]] = [:]
        // An entity table by its shape as well as its name: a table of one's own may start with `z` too.
        let keyColumns: Set<String> = ["z_pk", "z_ent", "z_opt"]
        let namesOfEntityTables = Set(
            Dictionary(grouping: columns.compactMap { row in row[0].text.map { ($0, row[1].text ?? "") } }, by: \.0)
                .filter { keyColumns.isSubset(of: $0.value.map(\.1)) }.keys
        )
        func tableKind(_ table: String) -> PostgresTableKind {
            let kind = Self.postgresTableKind(table)
            return kind == .entity && !namesOfEntityTables.contains(table) ? .other : kind
        }
        for row in columns {
            guard let table = row[0].text, let column = row[1].text, let type = row[2].text else { continue }
            switch tableKind(table) {
            case .entity:
                tables[table, default: [:]][column] = TypeClass(declaredType: type)
                exactTypes[table, default: [:]][column] = type
            case .join: joins[table, default: []].insert(column)
            case .bookkeeping: break
            case .other: others.insert(table)
            }
        }
        var indexed: Set<String> = []
        var modelIndexes: [String: String] = [:]
        // One row per key column of each index, in the index's order.
        let indexColumns = try connection.rows(
            rawSQL: """
                SELECT t.relname::text, i.relname::text, x.indisunique::int, (x.indpred IS NOT NULL)::int, k.ord, a.attname::text, x.indisprimary::int,
                    pg_catalog.pg_index_column_has_property(x.indexrelid, k.ord::int, 'desc')::int
                FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
                JOIN pg_catalog.pg_class t ON t.oid = x.indrelid JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
                CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                WHERE n.nspname = current_schema() AND k.ord <= x.indnkeyatts AND x.indisvalid
                ORDER BY 1, 2, 5
                """
        )
        var byIndex: [(table: String, name: String, unique: Bool, partial: Bool, primary: Bool, columns: [(name: String, descending: Bool)])] = []
        for row in indexColumns {
            guard let table = row[0].text, let name = row[1].text, let column = row[5].text else { continue }
            if byIndex.last?.table != table || byIndex.last?.name != name {
                byIndex.append((table, name, row[2].int64 == 1, row[3].int64 == 1, row[6].int64 == 1, []))
            }
            byIndex[byIndex.count - 1].columns.append((column, row[7].int64 == 1))
        }
        var definitions: Set<String> = []
        for index in byIndex {
            let kind = tableKind(index.table)
            // An entity table's key is its row's identity, not a look-up index (SQLite's is
            // the row id); a join table's leads with its source, as on SQLite.
            guard kind == .join || (kind == .entity && !index.primary), let first = index.columns.first else { continue }
            indexed.insert("\(index.table).\(first.name)")
            guard kind == .entity else { continue }
            definitions.insert(definition(unique: index.unique, table: index.table, columns: index.columns, partial: index.partial))
            guard isModelIndexName(index.name.uppercased()) else { continue }
            modelIndexes[index.name] = definition(unique: index.unique, table: index.table, columns: index.columns, partial: index.partial)
        }
        var entities: [Int: String] = [:]
        let hasPrimaryKeyTable =
            try connection.scalar(
                rawSQL: "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'z_primarykey'"
            )?.int64 == 1
        if hasPrimaryKeyTable {
            for row in try connection.rows(rawSQL: "SELECT z_ent, z_name FROM z_primarykey") {
                if let number = row[0].int64, let name = row[1].text { entities[Int(number)] = name }
            }
        }
        var structure = StoreStructure(entityTables: tables, joinTables: joins, entities: entities, indexedColumns: indexed, otherTables: others)
        structure.modelIndexes = modelIndexes
        structure.indexDefinitions = definitions
        structure.exactColumnTypes = exactTypes
        return structure
    }

    private enum PostgresTableKind {
        case entity, join, bookkeeping, other
    }

    /// By its name: `z_1tags` is a join table, other `z_` tables Core Data's bookkeeping,
    /// other `z…` tables an entity's (when they have `z_pk`, `z_ent` and `z_opt`); any
    /// other name is a table beside the store's.
    private static func postgresTableKind(_ name: String) -> PostgresTableKind {
        guard name.hasPrefix("z") else { return .other }
        guard name.hasPrefix("z_") else { return .entity }
        return name.dropFirst(2).first?.isNumber == true ? .join : .bookkeeping
    }
}
