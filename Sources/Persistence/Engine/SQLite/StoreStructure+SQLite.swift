extension StoreStructure {
    /// Reads the structure of the SQLite store on `connection`; only reads.
    ///
    /// - Throws: ``DatabaseError`` when the catalogue or `Z_PRIMARYKEY` cannot be read.
    public static func read(from connection: any DatabaseConnection) throws -> StoreStructure {
        var tables: [String: [String: TypeClass]] = [:]
        var joins: [String: Set<String>] = [:]
        var indexed: Set<String> = []
        var modelIndexes: [String: String] = [:]
        var tableConstraints: Set<String> = []
        var definitions: Set<String> = []
        let names = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0[0].text }
        for name in names where name.hasPrefix("Z") {
            // `Z_<n>NAME` is a join table; other `Z_` tables are Core Data's bookkeeping.
            let isJoin = name.hasPrefix("Z_") && name.dropFirst(2).first?.isNumber == true
            guard isJoin || !name.hasPrefix("Z_") else { continue }
            let columns = try connection.rows(rawSQL: "PRAGMA table_info(\(name.quotedIdentifier))").map { ($0[1].text ?? "", $0[2].text ?? "") }
            if isJoin {
                joins[name] = Set(columns.map(\.0))
            } else {
                tables[name] = Dictionary(columns.map { ($0.0, TypeClass(declaredType: $0.1)) }, uniquingKeysWith: { first, _ in first })
            }
            for index in try connection.rows(rawSQL: "PRAGMA index_list(\(name.quotedIdentifier))") {
                // seqno, name, unique, origin, partial
                guard let indexName = index[1].text,
                    let first = try connection.rows(rawSQL: "PRAGMA index_info(\(indexName.quotedIdentifier))").first(where: { $0[0].int64 == 0 })?[2]
                        .text
                else { continue }
                indexed.insert("\(name).\(first)")
                if !isJoin, index[3].text == "u", index[2].int64 == 1 {
                    // `UNIQUE (…)` inside CREATE TABLE: how older releases wrote a uniqueness constraint.
                    let columns = try connection.rows(rawSQL: "PRAGMA index_info(\(indexName.quotedIdentifier))")
                        .sorted { ($0[0].int64 ?? 0) < ($1[0].int64 ?? 0) }.map { (name: $0[2].text ?? "", descending: false) }
                    tableConstraints.insert(definition(unique: true, table: name, columns: columns, partial: false))
                    continue
                }
                guard !isJoin, index[3].text == "c" else { continue }
                // seqno, cid, name, desc, collation, key: the key columns, in order.
                let columns = try connection.rows(rawSQL: "PRAGMA index_xinfo(\(indexName.quotedIdentifier))")
                    .filter { $0[5].int64 == 1 }
                    .sorted { ($0[0].int64 ?? 0) < ($1[0].int64 ?? 0) }
                    .map { (name: $0[2].text ?? "", descending: $0[3].int64 == 1) }
                let described = definition(unique: index[2].int64 == 1, table: name, columns: columns, partial: index[4].int64 == 1)
                definitions.insert(described)
                guard isModelIndexName(indexName) else { continue }
                modelIndexes[indexName] = described
            }
        }
        var entities: [Int: String] = [:]
        if names.contains("Z_PRIMARYKEY") {
            for row in try connection.rows("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") {
                if let number = row[0].int64, let name = row[1].text { entities[Int(number)] = name }
            }
        }
        let others = Set(names.filter { !$0.hasPrefix("Z") && !$0.hasPrefix("sqlite_") })
        var structure = StoreStructure(entityTables: tables, joinTables: joins, entities: entities, indexedColumns: indexed, otherTables: others)
        structure.modelIndexes = modelIndexes
        structure.uniqueTableConstraints = tableConstraints
        structure.indexDefinitions = definitions
        return structure
    }
}
