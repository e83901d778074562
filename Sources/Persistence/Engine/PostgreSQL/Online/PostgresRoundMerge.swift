/// Puts what a catch-up round's store became, migrated, in place of what the migrated copy
/// held for the objects migrated again (``PostgresChangedRows/merged``): each one's earlier
/// result is deleted by its key (an object keeps its key through the plan, see
/// ``OnlineKeyCorrespondence``), its new one inserted, and so are the join rows that touch
/// it. An object deleted meanwhile has no new result: its old one goes.
///
/// ```swift
/// let merge = PostgresRoundMerge(source: storeLayout, target: copyLayout, keys: keys)
/// try merge.merge(rows, from: roundSchema, into: copySchema, on: connection)  // in the round's transaction
/// ```
struct PostgresRoundMerge: Sendable {
    /// The store's layout at its version.
    let source: StoreSchema
    /// The migrated copy's layout at the target version.
    let target: StoreSchema
    let keys: OnlineKeyCorrespondence

    /// Merges the migrated round store in `roundSchema` into `copySchema`.
    ///
    /// - Throws: ``MigrationError/Code/cannotMigrateOnline`` when the round's migration made
    ///   objects that are not its objects' own (a policy that made extra objects), whose
    ///   earlier results the copy could not tell; nothing is merged then.
    func merge(_ rows: PostgresChangedRows, from roundSchema: String, into copySchema: String, on connection: any DatabaseConnection) throws {
        let (round, copy) = (roundSchema.quotedIdentifier, copySchema.quotedIdentifier)
        func numbering(_ schema: String) throws -> [String] {
            try connection.rows(rawSQL: "SELECT z_ent, z_name FROM \(schema).z_primarykey ORDER BY z_ent").map {
                "\($0[0].int64 ?? -1) \($0[1].text ?? "")"
            }
        }
        let (made, held) = (try numbering(round), try numbering(copy))
        guard made == held else {
            throw MigrationError(
                .store,
                "a catch-up round's store was migrated with other entity numbers than the copy (\(made) against \(held))",
                hint: "the store is as it was; report this with the output of `migrate --plan`"
            )
        }
        let d = target.dialect
        var mergedByTarget: [String: Set<Int64>] = [:]
        for table in target.rootTables {
            let name = d.name(table.name)
            guard let sourceRoot = keys.sourceRoot(ofTarget: table.rootEntityName), let sourceTable = source.table(for: sourceRoot) else {
                let stray = try connection.scalar(rawSQL: "SELECT count(*) FROM \(round).\(name.quotedIdentifier)")?.int64 ?? 0
                if stray > 0 {
                    throw OnlineKeyCorrespondence.refusal(
                        "migrating changed objects made \(table.rootEntityName) objects, which no object of the store's version becomes"
                    )
                }
                continue
            }
            let sourceName = d.name(sourceTable.name)
            let stray =
                try connection.scalar(
                    rawSQL: "SELECT count(*) FROM \(round).\(name.quotedIdentifier) WHERE NOT (z_pk = ANY($1::bigint[]))",
                    [PostgresChangedRows.array(rows.reached[sourceName] ?? [])]
                )?.int64 ?? 0
            if stray > 0 {
                throw OnlineKeyCorrespondence.refusal(
                    "migrating \(sourceRoot) objects made \(table.rootEntityName) objects under keys of their own (a policy that makes more than one object of one)"
                )
            }
            guard let merged = rows.merged[sourceName], !merged.isEmpty else { continue }
            mergedByTarget[name] = merged
            let columns = try self.columns(of: name, in: copySchema, on: connection)
            let keys = PostgresChangedRows.array(merged)
            try connection.run(rawSQL: "DELETE FROM \(copy).\(name.quotedIdentifier) WHERE z_pk = ANY($1::bigint[])", [keys])
            try connection.run(
                rawSQL:
                    "INSERT INTO \(copy).\(name.quotedIdentifier) (\(columns)) SELECT \(columns) FROM \(round).\(name.quotedIdentifier) WHERE z_pk = ANY($1::bigint[])",
                [keys]
            )
        }
        for join in target.allJoinTables {
            guard let sourceSide = rootTableName(of: join.sourceEntity), let destinationSide = rootTableName(of: join.destinationEntity) else {
                continue
            }
            let (sourceKeys, destinationKeys) = (mergedByTarget[sourceSide] ?? [], mergedByTarget[destinationSide] ?? [])
            guard !sourceKeys.isEmpty || !destinationKeys.isEmpty else { continue }
            let name = (d.name(join.name)).quotedIdentifier
            let columns = try self.columns(of: d.name(join.name), in: copySchema, on: connection)
            let touching =
                "\((d.name(join.sourceColumn)).quotedIdentifier) = ANY($1::bigint[]) OR \((d.name(join.destinationColumn)).quotedIdentifier) = ANY($2::bigint[])"
            let arguments = [PostgresChangedRows.array(sourceKeys), PostgresChangedRows.array(destinationKeys)]
            try connection.run(rawSQL: "DELETE FROM \(copy).\(name) WHERE \(touching)", arguments)
            try connection.run(
                rawSQL: "INSERT INTO \(copy).\(name) (\(columns)) SELECT \(columns) FROM \(round).\(name) WHERE \(touching)",
                arguments
            )
        }
        // Keys the round's objects took stay taken.
        try connection.execute(
            rawSQL: "UPDATE \(copy).z_primarykey p SET z_max = r.z_max FROM \(round).z_primarykey r WHERE p.z_ent = r.z_ent AND r.z_max > p.z_max"
        )
    }

    /// The root table, named as in the store, of a target entity.
    private func rootTableName(of entity: String) -> String? {
        guard let table = target.table(for: entity), let root = target.table(for: table.rootEntityName) else { return nil }
        return target.dialect.name(root.name)
    }

    /// The table's columns, quoted and in order, for statements that copy rows by name.
    private func columns(of table: String, in schema: String, on connection: any DatabaseConnection) throws -> String {
        try connection.rows(
            rawSQL: """
                SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
                """,
            [.text(schema), .text(table)]
        ).compactMap { $0[0].text.map(\.quotedIdentifier) }.joined(separator: ", ")
    }
}
