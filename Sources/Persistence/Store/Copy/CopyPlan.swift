/// The tables of one model's store and how to move their rows between dialects.
struct CopyPlan: Sendable {
    let model: ManagedObjectModel
    let source: StoreSchema
    /// The source's externally stored binary attributes, when it is a store of Apple's
    /// (``ExternalBinaryStorage``): the copy holds their bytes in their cells.
    var externalBinaryStorage: ExternalBinaryStorage? = nil
    var sourceURL: StoreURL? = nil

    /// A table's columns in both dialects, with the attribute type of each attribute column
    /// (keys and counters are plain integers).
    struct Table: Sendable {
        let sourceName: String
        let columns: [(source: String, type: AttributeType?)]
        /// The indexes in `columns` of the externally stored binary attributes.
        var externallyStored: Set<Int> = []
        /// The source columns to page by, in order: `Z_PK`, or both columns of a join table.
        let order: [String]
        let coreDataName: String
        let coreDataColumns: [String]
    }

    var tables: [Table] {
        let d = source.dialect
        var tables: [Table] = []
        for table in source.rootTables {
            let columns =
                [("Z_PK", nil), ("Z_ENT", nil), ("Z_OPT", nil)].map { (d.name($0.0), $0.1 as AttributeType?) }
                + table.allColumns.map { column -> (String, AttributeType?) in
                    if case .attribute(let type) = column.kind { return (column.name, type) }
                    return (column.name, nil)
                }
            var copied = Table(
                sourceName: table.name,
                columns: columns,
                order: [d.name("Z_PK")],
                coreDataName: table.name.uppercased(),
                coreDataColumns: columns.map { $0.0.uppercased() }
            )
            let external = Set(
                model.entityAndDescendants(of: model.entity(named: table.rootEntityName)!).flatMap { entity in
                    entity.attributes.filter(\.allowsExternalBinaryDataStorage).compactMap {
                        source.table(for: entity.name)?.column(for: $0.name)?.name
                    }
                }
            )
            copied.externallyStored = Set(columns.indices.filter { external.contains(columns[$0].0) })
            tables.append(copied)
        }
        for join in source.allJoinTables {
            let columns: [(String, AttributeType?)] = join.columns.map { ($0, nil) }
            tables.append(
                Table(
                    sourceName: join.name,
                    columns: columns,
                    order: [join.sourceColumn, join.destinationColumn],
                    coreDataName: join.name.uppercased(),
                    coreDataColumns: columns.map { $0.0.uppercased() }
                )
            )
        }
        tables.append(
            Table(
                sourceName: d.name("Z_PRIMARYKEY"),
                columns: ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"].map { (d.name($0), nil) },
                order: [d.name("Z_ENT")],
                coreDataName: "Z_PRIMARYKEY",
                coreDataColumns: ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"]
            )
        )
        return tables
    }

    /// Copies every row, batch by batch, into `destination`, whose writer connection is in
    /// a transaction the caller opened, with the destination's tables created and empty.
    func copy(from database: any Database, to destination: any Database, batchSize: Int) async throws -> [String: Int] {
        let to = destination.dialect
        var counts: [String: Int] = [:]
        for table in tables {
            // Names in Core Data's spelling: each side's dialect spells them its way.
            let clear: SQL = "DELETE FROM \(storeName: table.coreDataName)"
            _ = try await destination.writeWithoutTransaction { try $0.run(clear) }
            let columns = table.coreDataColumns.map { to.name($0) }
            let list = table.columns.map { "\(identifier: $0.source)" as SQL }.joined(separator: ", ")
            let order = table.order.map { "\(identifier: $0)" as SQL }.joined(separator: ", ")
            let orderKey: SQL = "\(identifier: table.order[0])"
            var offset = 0
            var last: DatabaseValue = .integer(Int64.min)
            while true {
                // Keyed tables page by key, so each batch costs the same; join tables by offset.
                let keyed = table.order.count == 1
                // The source's names as its structure read them (an Apple store's own spelling).
                let sql: SQL =
                    keyed
                    ? "SELECT \(list) FROM \(identifier: table.sourceName) WHERE \(orderKey) > \(last) ORDER BY \(order) LIMIT \(literal: batchSize)"
                    : "SELECT \(list) FROM \(identifier: table.sourceName) ORDER BY \(order) LIMIT \(literal: batchSize) OFFSET \(literal: offset)"
                let rows = try await database.read { try $0.rows(sql) }
                if keyed, let key = table.columns.firstIndex(where: { $0.source == table.order[0] }), let final = rows.last { last = final[key] }
                let batch = try rows.map { row in
                    try table.columns.enumerated().map { index, column -> DatabaseValue in
                        guard let type = column.type else { return row[index] }
                        if let external = externalBinaryStorage, let sourceURL, table.externallyStored.contains(index) {
                            return to.databaseValue(try external.value(of: row[index], store: sourceURL), type: type)
                        }
                        // Each engine stores some types its own way (booleans, dates, UUIDs).
                        return to.databaseValue(ValueCoding.attributeValue(row[index], type: type), type: type)
                    }
                }
                try await destination.writeWithoutTransaction { connection in
                    try connection.insertRows(into: to.name(table.coreDataName), columns: columns, rows: batch)
                }
                offset += rows.count
                if rows.count < batchSize { break }
            }
            counts[table.coreDataName] = offset
        }
        return counts
    }
}
