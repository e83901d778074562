/// A mapping model run as `INSERT … SELECT` from the source store, attached to the new
/// destination store as `src`: no row passes through Swift while instances and
/// relationships are created.
///
/// It applies when no entity mapping has a policy or a source filter, every attribute
/// value expression translates to SQL with the same meaning as in Swift (see
/// ``SQLValueTranslator``), and every relationship value is Core Data's
/// `destinationInstancesForEntityMappingNamed:sourceInstances:` over a source
/// relationship stored as a foreign key. Otherwise ``plan(mapping:source:destination:dialect:)``
/// says why, and the step streams through the migration manager instead.
///
/// Primary keys are kept, offset only where rows of several source tables meet in one
/// destination table, so relationships translate to key arithmetic.
struct SetBasedMigration: Sendable {
    struct Unsupported: Error, Sendable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// One entity mapping's instances: the columns and the SQL that fills each.
    struct Insert: Sendable {
        let mapping: String
        let sourceRoot: String
        let destinationRoot: String
        let destinationTable: String
        let sourceTable: String
        let sourceEntityNumber: Int
        let destinationEntityNumber: Int
        /// Destination column → SQL over the source row `s`, whose placeholders take
        /// `arguments` in order; key offsets are resolved when the step runs.
        let columns: [(column: String, sql: MigrationSQL)]
        let arguments: [DatabaseValue]
    }

    /// One join table's rows: a SELECT of (owner key, other key) pairs from the source.
    struct JoinInsert: Sendable {
        let table: String
        let ownerColumn: String
        let otherColumn: String
        let select: MigrationSQL
    }

    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let inserts: [Insert]
    let joinInserts: [JoinInsert]

    /// `sourceNumbering` is how the source store's entities are numbered (by default as a
    /// new store of `source` is).
    static func plan(mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel, dialect: any SQLDialect,
                     sourceNumbering: EntityNumbering? = nil) -> Result<SetBasedMigration, Unsupported> {
        do {
            return .success(try SetBasedPlanner(mapping: mapping, source: source, destination: destination, dialect: dialect, sourceNumbering: sourceNumbering).plan())
        } catch let unsupported as Unsupported {
            return .failure(unsupported)
        } catch {
            return .failure(Unsupported(reason: "\(error)"))
        }
    }

    /// Runs the inserts in one transaction on `connection`, which reaches the source's
    /// tables through `sourceSchema` (an attached SQLite database, a PostgreSQL schema);
    /// returns the rows written per entity mapping.
    func run(on connection: any DatabaseConnection, sourceSchema: String) throws -> [(mapping: String, rows: Int)] {
        let d = connection.dialect
        // Rows of different source tables meeting in one destination table are offset by
        // the larger keys of the tables before them.
        var offsets: [String: Int64] = [:]
        var rootOffsets: [String: Int64] = [:]
        var nextOffset: [String: Int64] = [:]
        for insert in inserts {
            let key = "\(insert.destinationRoot)|\(insert.sourceRoot)"
            if let offset = rootOffsets[key] {
                offsets[insert.mapping] = offset
                continue
            }
            let base = nextOffset[insert.destinationRoot] ?? 0
            rootOffsets[key] = base
            offsets[insert.mapping] = base
            let largest: MigrationSQL = "SELECT max(\(d.name("Z_PK"))) FROM \(sourceTable: insert.sourceTable)"
            let max = try connection.scalar(largest.resolved(sourceSchema: sourceSchema, offsets: [:]))?.int64 ?? 0
            nextOffset[insert.destinationRoot] = base + max
        }
        var written: [(String, Int)] = []
        for insert in inserts {
            let names = [d.name("Z_PK"), d.name("Z_ENT"), d.name("Z_OPT")] + insert.columns.map(\.column)
            let values: [MigrationSQL] = ["s.\(d.name("Z_PK")) + \(offsetOf: insert.mapping)", "\(insert.destinationEntityNumber)", "1"] + insert.columns.map(\.sql)
            let sql: MigrationSQL = """
                INSERT INTO \(insert.destinationTable) (\(names.joined(separator: ", "))) \
                SELECT \(MigrationSQL.joined(values, separator: ", ")) FROM \(sourceTable: insert.sourceTable) s WHERE s.\(d.name("Z_ENT")) = \(insert.sourceEntityNumber)
                """
            written.append((insert.mapping, try connection.run(sql.resolved(sourceSchema: sourceSchema, offsets: offsets), insert.arguments)))
        }
        for join in joinInserts {
            let sql: MigrationSQL = "INSERT INTO \(join.table) (\(join.ownerColumn), \(join.otherColumn)) \(join.select)"
            try connection.run(sql.resolved(sourceSchema: sourceSchema, offsets: offsets), [])
        }
        // The key generator continues after the largest key of each table.
        let schema = StoreSchema(model: destination, dialect: d)
        for table in schema.rootTables {
            try connection.run("""
                UPDATE \(d.name("Z_PRIMARYKEY")) SET \(d.name("Z_MAX")) = (SELECT coalesce(max(\(d.name("Z_PK"))), 0) FROM \(table.name)) \
                WHERE \(d.name("Z_ENT")) = \(table.entityNumber)
                """, [])
        }
        return written
    }
}
