/// An entity mapping whose hooks declare their values (``DeclaredValues``), made as SQL: the
/// source rows are read in key order with their declared reads and the values the mapping
/// gives the declared sets; the hooks run on those; what they set goes to a work table in
/// the destination, keyed by source key; and the chunk's ``EntityMappingInsert`` joins it,
/// each declared column taking the hook's value where it set one.
///
/// A source the hooks made no destination for has no work row, so the join leaves it out,
/// as Core Data's policy that makes nothing for a source does.
struct DeclaredInsert: Sendable {
    /// What the mapping's expressions make of every column, as the SQL instances stage has it.
    let insert: EntityMappingInsert
    /// The source attributes the hooks read, with their columns.
    let reads: [Column]
    /// The destination attributes the hooks set, with their columns and the mapping's value
    /// for them over the source row `s`.
    let sets: [Column]
    /// Who declared the values (a policy's and a manager's class), for messages and the plan.
    let declaredBy: [String]
    let sourceEntity: EntityDescription
    let destinationEntity: EntityDescription

    struct Column: Sendable {
        let attribute: String
        let column: String
        let type: AttributeType
        /// Over the source row `s`: the source column, or the mapping's value for a set.
        let value: SQL
    }

    /// How the mapping runs with the hooks' `declared` values, or why it cannot.
    static func plan(
        _ insert: EntityMappingInsert,
        declared: DeclaredValues,
        declaredBy: [String],
        source: (model: ManagedObjectModel, entity: EntityDescription),
        destination: (model: ManagedObjectModel, entity: EntityDescription)
    ) -> Result<DeclaredInsert, SQLInsertUnsupported> {
        let who = declaredBy.joined(separator: " and ")
        var reads: [Column] = []
        for name in declared.reads.sorted() {
            guard let attribute = source.model.attribute(named: name, of: source.entity), !attribute.isTransient,
                let column = insert.sourceTable.column(for: name)
            else {
                return .failure(
                    SQLInsertUnsupported(reason: "\(who) declares reading '\(name)', which is no stored attribute of \(source.entity.name)")
                )
            }
            // Such a value may be a reference to a file beside the store, which a fetch reads.
            if attribute.allowsExternalBinaryDataStorage {
                return .failure(SQLInsertUnsupported(reason: "\(who) declares reading '\(name)', which may be stored outside the store"))
            }
            reads.append(Column(attribute: name, column: column.name, type: attribute.type, value: "s.\(identifier: column.name)"))
        }
        var sets: [Column] = []
        for name in declared.sets.sorted() {
            guard let attribute = destination.model.attribute(named: name, of: destination.entity), !attribute.isTransient,
                let column = insert.destinationTable.column(for: name), let value = insert.value(of: column.name)
            else {
                return .failure(
                    SQLInsertUnsupported(reason: "\(who) declares setting '\(name)', which is no stored attribute of \(destination.entity.name)")
                )
            }
            sets.append(Column(attribute: name, column: column.name, type: attribute.type, value: value))
        }
        // One bit per declared set in the work row's mask.
        guard sets.count <= 62 else { return .failure(SQLInsertUnsupported(reason: "\(who) declares more than 62 values to set")) }
        return .success(
            DeclaredInsert(
                insert: insert,
                reads: reads,
                sets: sets,
                declaredBy: declaredBy,
                sourceEntity: source.entity,
                destinationEntity: destination.entity
            )
        )
    }

    var mapping: String { insert.mapping }

    /// Up to `limit` source rows after the key `last`, in key order, on the source store:
    /// the key, each declared read, then each declared set's value as the mapping makes it.
    func readStatement(after last: Int64, limit: Int) -> SQL {
        let values: [SQL] = ["s.\(storeName: "Z_PK")"] + reads.map(\.value) + sets.map(\.value)
        let table = insert.sourceTable
        let sql: SQL = """
            SELECT \(values.joined(separator: ", ")) FROM \(sourceTable: table.name) s \
            WHERE s.\(storeName: "Z_ENT") = \(literal: table.entityNumber) AND s.\(storeName: "Z_PK") > \(last) \
            ORDER BY s.\(storeName: "Z_PK") LIMIT \(literal: limit)
            """
        return sql.resolved(sourceSchema: nil, offsets: [:])
    }

    /// The work table the hooks' values wait in, in the destination, for one chunk.
    struct WorkTable: Sendable {
        let name: String
        let key: String
        let mask: String
        let values: [String]
        let dialect: any SQLDialect

        /// `number`: the entity mapping's place in its mapping model. Each mapping has a table
        /// of its own: its columns' types are its own, and a statement prepared for another
        /// mapping's table of the same name would keep that one's.
        init(_ insert: DeclaredInsert, number: Int, dialect: any SQLDialect) {
            self.dialect = dialect
            name = dialect.name("Z_MIGRATIONVALUES\(number)")
            key = dialect.name("Z_SOURCE")
            mask = dialect.name("Z_SET")
            values = insert.sets.indices.map { dialect.name("Z_VALUE\($0)") }
            types = insert.sets.map(\.type)
        }

        private let types: [AttributeType]

        /// Drops what an earlier mapping or run left, and makes the table for this mapping.
        var create: [SQL] {
            let columns: [SQL] =
                ["\(identifier: key) \(raw: dialect.keyColumnType) PRIMARY KEY", "\(identifier: mask) \(raw: dialect.keyColumnType) NOT NULL"]
                + zip(values, types).map { "\(identifier: $0) \(raw: dialect.columnType(for: $1))" }
            return [drop, "CREATE TABLE \(identifier: name) (\(columns.joined(separator: ", ")))"]
        }

        var drop: SQL { "DROP TABLE IF EXISTS \(identifier: name)" }
        var clear: SQL { "DELETE FROM \(identifier: name)" }
        var columns: [String] { [key, mask] + values }
    }

    /// The chunk's insert after the source key `lower` up to `upper`, joining `work`: a
    /// declared column takes the hook's value where its bit is set, the mapping's otherwise.
    func statement(joining work: WorkTable, sourceKeysAfter lower: Int64, upTo upper: Int64) -> SQL {
        var replacing: [String: SQL] = [:]
        for (index, set) in sets.enumerated() {
            replacing[set.column] =
                "CASE WHEN (w.\(identifier: work.mask) & \(literal: Int64(1) << index)) <> 0 THEN w.\(identifier: work.values[index]) ELSE \(set.value) END"
        }
        let join: SQL = "JOIN \(identifier: work.name) w ON w.\(identifier: work.key) = s.\(storeName: "Z_PK")"
        return insert.statement(joining: join, replacing: replacing) + EntityMappingInsert.keyRange(after: lower, upTo: upper)
    }
}
