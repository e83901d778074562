/// An index the store's DDL creates: on a foreign key, on `Z_ENT` of a shared table, or on
/// the destination column of a join table.
public struct StoreIndex: Sendable, Hashable {
    public let name: String
    public let table: String
    public let columns: [String]
}

extension StoreSchema {
    /// The statements that create an empty store for this model: entity tables, join
    /// tables, indexes and Core Data's bookkeeping tables.
    ///
    /// - Parameter includingIndexes: `false` leaves out the secondary indexes (foreign keys,
    ///   `Z_ENT`, join destinations), for a store filled in bulk first; ``indexStatements()``
    ///   creates them afterwards.
    public func createStatements(includingIndexes: Bool = true) -> [String] {
        var statements: [String] = []
        for table in rootTables {
            statements.append(createTableStatement(for: table))
            if includingIndexes { statements.append(contentsOf: indexes(of: table).map { createIndexStatement($0) }) }
        }
        for join in allJoinTables {
            statements.append(createTableStatement(for: join))
            if includingIndexes { statements.append(contentsOf: indexes(of: join).map { createIndexStatement($0) }) }
        }
        statements.append(contentsOf: Self.bookkeepingStatements(dialect))
        return statements
    }

    /// `CREATE INDEX IF NOT EXISTS` for every secondary index of the model's tables: what
    /// ``createStatements(includingIndexes:)`` left out, and nothing where they exist.
    public func indexStatements() -> [String] {
        (rootTables.flatMap { indexes(of: $0) } + allJoinTables.flatMap { indexes(of: $0) }).map { createIndexStatement($0, ifNotExists: true) }
    }

    /// The type of a column as the DDL declares it.
    func columnType(of column: Column) -> String {
        switch column.kind {
        case .attribute(let type): dialect.columnType(for: type)
        case .foreignKey, .orderKey: dialect.engine == .postgres ? "bigint" : "INTEGER"
        }
    }

    /// `CREATE TABLE` for the root table of an entity hierarchy, under `name` when given
    /// (a migration may create it under a temporary name first).
    func createTableStatement(for table: EntityTable, named name: String? = nil) -> String {
        let pk = dialect.engine == .postgres ? "bigint PRIMARY KEY" : "INTEGER PRIMARY KEY"
        let int = dialect.engine == .postgres ? "integer" : "INTEGER"
        var columns = ["\(dialect.name("Z_PK")) \(pk)", "\(dialect.name("Z_ENT")) \(int)", "\(dialect.name("Z_OPT")) \(int)"]
        columns.append(contentsOf: table.allColumns.map { "\($0.name) \(columnType(of: $0))" })
        return "CREATE TABLE \(name ?? table.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// `CREATE TABLE` for a join table, under `name` when given.
    func createTableStatement(for join: JoinTable, named name: String? = nil) -> String {
        let key = dialect.engine == .postgres ? "bigint" : "INTEGER"
        var columns = ["\(join.sourceColumn) \(key)", "\(join.destinationColumn) \(key)"]
        if let order = join.orderColumn { columns.append("\(order) \(key)") }
        columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
        return "CREATE TABLE \(name ?? join.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// The indexes of an entity table: `Z_ENT` when the table holds several entities, and
    /// every foreign key.
    func indexes(of table: EntityTable) -> [StoreIndex] {
        var result: [StoreIndex] = []
        if table.entityNumbers.count > 1 {
            result.append(StoreIndex(name: dialect.name(table.name + "_Z_ENT_INDEX"), table: table.name, columns: [dialect.name("Z_ENT")]))
        }
        for column in table.allColumns where column.kind.sortRank == 0 {
            result.append(StoreIndex(name: "\(table.name)_\(column.name)_\(dialect.name("INDEX"))", table: table.name, columns: [column.name]))
        }
        return result
    }

    /// The index of a join table on its destination column (the primary key covers the source).
    func indexes(of join: JoinTable) -> [StoreIndex] {
        [StoreIndex(name: "\(join.name)_\(join.destinationColumn)_\(dialect.name("INDEX"))", table: join.name, columns: [join.destinationColumn, join.sourceColumn])]
    }

    func createIndexStatement(_ index: StoreIndex, ifNotExists: Bool = false) -> String {
        "CREATE INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\(index.name) ON \(index.table) (\(index.columns.joined(separator: ", ")))"
    }

    /// `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE`, as Core Data creates them.
    static func bookkeepingStatements(_ dialect: SQLDialect) -> [String] {
        switch dialect.engine {
        case .sqlite:
            [
                "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
                "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
                "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
            ]
        case .postgres:
            [
                "CREATE TABLE z_primarykey (z_ent integer PRIMARY KEY, z_name text, z_super integer, z_max bigint)",
                "CREATE TABLE z_metadata (z_version integer PRIMARY KEY, z_uuid varchar(255), z_plist bytea)",
                "CREATE TABLE z_modelcache (z_content bytea)",
            ]
        }
    }

    /// The `Z_PRIMARYKEY` rows of an empty store: one per entity, `Z_MAX` 0.
    public func primaryKeyRows() -> [(entity: Int, name: String, superEntity: Int)] {
        tables.values.sorted { $0.entityNumber < $1.entityNumber }.map { ($0.entityNumber, $0.entityName, $0.superNumber) }
    }
}
