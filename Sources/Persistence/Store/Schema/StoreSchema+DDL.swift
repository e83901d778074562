extension StoreSchema {
    /// The statements that create an empty store for this model: entity tables, join
    /// tables, indexes and Core Data's bookkeeping tables.
    public func createStatements() -> [String] {
        var statements: [String] = []
        let pk = dialect.engine == .postgres ? "bigint PRIMARY KEY" : "INTEGER PRIMARY KEY"
        let int = dialect.engine == .postgres ? "integer" : "INTEGER"
        let key = dialect.engine == .postgres ? "bigint" : "INTEGER"
        for table in rootTables {
            var columns = ["\(dialect.name("Z_PK")) \(pk)", "\(dialect.name("Z_ENT")) \(int)", "\(dialect.name("Z_OPT")) \(int)"]
            for column in table.allColumns {
                switch column.kind {
                case .attribute(let type): columns.append("\(column.name) \(dialect.columnType(for: type))")
                case .foreignKey, .orderKey: columns.append("\(column.name) \(key)")
                }
            }
            statements.append("CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )")
            if table.entityNumbers.count > 1 {
                statements.append("CREATE INDEX \(dialect.name(table.name + "_Z_ENT_INDEX")) ON \(table.name) (\(dialect.name("Z_ENT")))")
            }
            for column in table.allColumns where column.kind.sortRank == 0 {
                statements.append("CREATE INDEX \(table.name)_\(column.name)_\(dialect.name("INDEX")) ON \(table.name) (\(column.name))")
            }
        }
        for join in allJoinTables {
            var columns = ["\(join.sourceColumn) \(key)", "\(join.destinationColumn) \(key)"]
            if let order = join.orderColumn { columns.append("\(order) \(key)") }
            columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
            statements.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
            statements.append("CREATE INDEX \(join.name)_\(join.destinationColumn)_\(dialect.name("INDEX")) ON \(join.name) (\(join.destinationColumn), \(join.sourceColumn))")
        }
        statements.append(contentsOf: Self.bookkeepingStatements(dialect))
        return statements
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
