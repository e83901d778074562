/// A mapping model run as `INSERT … SELECT` from the source store, attached to the new
/// destination store as `src`: no row passes through Swift while instances and
/// relationships are created.
///
/// It applies when no entity mapping has a policy or a source filter, every attribute
/// value expression translates to SQL with the same meaning as in Swift (see
/// ``SQLCompiler/attributeValues(of:into:of:table:row:)``), and every relationship value is Core Data's
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

    /// One join table's rows: a SELECT of (owner key, other key) pairs from the source, with
    /// the values of its order columns where it has them.
    struct JoinInsert: Sendable {
        let table: String
        let columns: [String]
        let select: SQL
    }

    /// Core Data's hidden key of a to-many without an inverse (`ZMODIFIER.Z2MODIFIERS`), and
    /// its order column when ordered: set on the destination's rows from (owner key `a`,
    /// destination key `b`, order `o`) pairs once every row is written. The key holds one
    /// owner, so a row paired with several keeps the smallest.
    struct KeyUpdate: Sendable {
        let table: String
        let keyColumn: String
        let orderColumn: String?
        let pairs: SQL

        var statement: SQL {
            let order: SQL = orderColumn.map { ", \(identifier: $0) = p.o" } ?? ""
            return """
                UPDATE \(identifier: table) SET \(identifier: keyColumn) = p.a\(order) \
                FROM (SELECT * FROM (SELECT q.*, row_number() OVER (PARTITION BY b ORDER BY a) AS n FROM (\(pairs)) q) r WHERE n = 1) p \
                WHERE \(identifier: table).\(storeName: "Z_PK") = p.b
                """
        }
    }

    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    /// One per entity mapping: its instances, attributes and look-up foreign keys.
    let inserts: [EntityMappingInsert]
    let joinInserts: [JoinInsert]
    let keyUpdates: [KeyUpdate]

    /// `sourceLayout` is how the source store is laid out: its entities' numbers and its tables' names (by default as a
    /// new store of `source` is).
    static func plan(
        mapping: MappingModel,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect: any SQLDialect,
        sourceLayout: StoreLayout? = nil
    ) -> Result<SetBasedMigration, Unsupported> {
        do {
            return .success(
                try SetBasedPlanner(mapping: mapping, source: source, destination: destination, dialect: dialect, sourceLayout: sourceLayout).plan()
            )
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
        func resolved(_ sql: SQL, _ offsets: [String: Int64]) -> SQL { sql.resolved(sourceSchema: sourceSchema, offsets: offsets) }
        // Rows of different source tables meeting in one destination table are offset by
        // the larger keys of the tables before them.
        var offsets: [String: Int64] = [:]
        var rootOffsets: [String: Int64] = [:]
        var nextOffset: [String: Int64] = [:]
        for insert in inserts {
            let destinationRoot = insert.destinationTable.rootEntityName
            let key = "\(destinationRoot)|\(insert.sourceTable.rootEntityName)"
            if let offset = rootOffsets[key] {
                offsets[insert.mapping] = offset
                continue
            }
            let base = nextOffset[destinationRoot] ?? 0
            rootOffsets[key] = base
            offsets[insert.mapping] = base
            let largest: SQL = "SELECT max(\(storeName: "Z_PK")) FROM \(sourceTable: insert.sourceTable.name)"
            let max = try connection.scalar(resolved(largest, [:]))?.int64 ?? 0
            nextOffset[destinationRoot] = base + max
        }
        var written: [(String, Int)] = []
        for insert in inserts {
            written.append((insert.mapping, try connection.run(resolved(insert.statement, offsets))))
        }
        for join in joinInserts {
            let columns: [SQL] = join.columns.map { "\(identifier: $0)" }
            let sql: SQL = "INSERT INTO \(identifier: join.table) (\(columns.joined(separator: ", "))) \(join.select)"
            try connection.run(resolved(sql, offsets))
        }
        for update in keyUpdates {
            try connection.run(resolved(update.statement, offsets))
        }
        // The key generator continues after the largest key of each table.
        let schema = StoreSchema(model: destination, dialect: d)
        for table in schema.rootTables {
            try connection.run(
                """
                UPDATE \(storeName: "Z_PRIMARYKEY") SET \(storeName: "Z_MAX") = (SELECT coalesce(max(\(storeName: "Z_PK")), 0) FROM \(identifier: table.name)) \
                WHERE \(storeName: "Z_ENT") = \(literal: table.entityNumber)
                """
            )
        }
        return written
    }
}
