/// An index the store's DDL creates: a look-up index (on a foreign key, on `Z_ENT` of a
/// shared table, on the destination column of a join table), or one the model asks for (a
/// uniqueness constraint's unique index, a fetch index).
public struct StoreIndex: Sendable, Hashable {
    /// Why the index exists.
    public enum Purpose: Sendable, Hashable {
        /// Fetches and faults look rows up by these columns.
        case lookup
        /// An entity's uniqueness constraint on these properties (a unique index).
        case uniqueness(entity: String, properties: [String])
        /// An entity's fetch index, by its name in the model.
        case fetchIndex(entity: String, name: String)
    }

    /// The index name, e.g. `ZBOOK_ZPUBLISHER_INDEX`.
    public let name: String
    /// The table the index is on.
    public let table: String
    /// The indexed columns, in the index's order.
    public let columns: [String]
    /// Why the index exists: a look-up (the default), a uniqueness constraint or a fetch index.
    public var purpose: Purpose = .lookup
    /// The columns kept in descending order (a fetch index element ordered so).
    public var descendingColumns: Set<String> = []
    /// The `Z_ENT` values the index covers when it serves a sub-entity alone (a partial index),
    /// `nil` for every row of the table.
    public var entityNumbers: [Int]? = nil

    /// An index named `name` on `columns` of `table`, a look-up index on every row unless told otherwise.
    public init(
        name: String,
        table: String,
        columns: [String],
        purpose: Purpose = .lookup,
        descendingColumns: Set<String> = [],
        entityNumbers: [Int]? = nil
    ) {
        self.name = name
        self.table = table
        self.columns = columns
        self.purpose = purpose
        self.descendingColumns = descendingColumns
        self.entityNumbers = entityNumbers
    }

    /// Whether the index refuses two rows with the same values.
    public var isUnique: Bool {
        if case .uniqueness = purpose { return true }
        return false
    }

    /// Whether the model asks for the index (a uniqueness constraint or a fetch index): it is
    /// named as Core Data names it, and recognition compares it by that name.
    public var isModelIndex: Bool { purpose != .lookup }
}

extension StoreSchema {
    /// The statements that create an empty store for this model: entity tables, join
    /// tables, indexes and Core Data's bookkeeping tables.
    ///
    /// - Parameter includingIndexes: `false` leaves out the secondary indexes (foreign keys,
    ///   `Z_ENT`, join destinations), for a store filled in bulk first; ``indexStatements()``
    ///   creates them afterwards.
    public func createStatements(includingIndexes: Bool = true) -> [SQL] {
        var statements: [SQL] = []
        for table in rootTables {
            statements.append(createTableStatement(for: table))
            if includingIndexes { statements.append(contentsOf: indexes(of: table).map { createIndexStatement($0) }) }
        }
        for join in allJoinTables {
            statements.append(createTableStatement(for: join))
            if includingIndexes { statements.append(contentsOf: indexes(of: join).map { createIndexStatement($0) }) }
        }
        statements.append(contentsOf: dialect.bookkeepingStatements)
        return statements
    }

    /// `CREATE INDEX IF NOT EXISTS` for every secondary index of the model's tables: what
    /// ``createStatements(includingIndexes:)`` left out, and nothing where they exist.
    public func indexStatements() -> [SQL] {
        (rootTables.flatMap { indexes(of: $0) } + allJoinTables.flatMap { indexes(of: $0) }).map { createIndexStatement($0, ifNotExists: true) }
    }

    /// The type of a column as the DDL declares it.
    func columnType(of column: Column) -> String {
        switch column.kind {
        case .attribute(let type): dialect.columnType(for: type)
        case .foreignKey, .orderKey, .hiddenForeignKey: dialect.keyColumnType
        case .entityType: dialect.entityColumnType
        }
    }

    /// `CREATE TABLE` for the root table of an entity hierarchy, under `name` when given
    /// (a migration may create it under a temporary name first).
    func createTableStatement(for table: EntityTable, named name: String? = nil) -> SQL {
        // Column types are keywords the dialect chose.
        let int = dialect.entityColumnType
        var columns: [SQL] = [
            "\(storeName: "Z_PK") \(raw: dialect.primaryKeyColumnType)", "\(storeName: "Z_ENT") \(raw: int)", "\(storeName: "Z_OPT") \(raw: int)",
        ]
        columns.append(contentsOf: table.allColumns.map { "\(identifier: $0.name) \(raw: columnType(of: $0))" })
        return "CREATE TABLE \(identifier: name ?? table.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// `CREATE TABLE` for a join table, under `name` when given.
    func createTableStatement(for join: JoinTable, named name: String? = nil) -> SQL {
        let key = dialect.keyColumnType
        var columns: [SQL] = join.columns.map { "\(identifier: $0) \(raw: key)" }
        columns.append("PRIMARY KEY (\(identifier: join.sourceColumn), \(identifier: join.destinationColumn))")
        return "CREATE TABLE \(identifier: name ?? join.name) ( \(columns.joined(separator: ", ")) )"
    }

    /// The indexes of an entity table: `Z_ENT` when the table holds several entities, every
    /// foreign key, then what the hierarchy's entities ask for (``modelIndexes(of:)``).
    func indexes(of table: EntityTable) -> [StoreIndex] {
        var result: [StoreIndex] = []
        if table.entityNumbers.count > 1 {
            result.append(StoreIndex(name: dialect.name(table.name + "_Z_ENT_INDEX"), table: table.name, columns: [dialect.name("Z_ENT")]))
        }
        for column in table.allColumns where column.kind.isLookupKey {
            result.append(StoreIndex(name: "\(table.name)_\(column.name)_\(dialect.name("INDEX"))", table: table.name, columns: [column.name]))
        }
        return result + modelIndexes(of: table)
    }

    /// The unique index of every uniqueness constraint and the index of every fetch index of
    /// the entities stored in `table` (a root table), named as Core Data names them:
    /// `Z_Car_UNIQUE_numberPlate`, `Z_Car_byMakerAndNumberPlate`.
    ///
    /// A sub-entity's index covers its own rows and its descendants' (`WHERE Z_ENT IN …`),
    /// as its constraint holds among them only. A fetch index element of type `RTree` is kept
    /// in an ordinary index: neither engine has R-tree indexes on a table's columns.
    func modelIndexes(of table: EntityTable) -> [StoreIndex] {
        guard let root = model.entity(named: table.rootEntityName) else { return [] }
        var result: [StoreIndex] = []
        for entity in model.entityAndDescendants(of: root).sorted(by: { $0.name < $1.name }) {
            guard let entityTable = tables[entity.name] else { continue }
            let partial = entity.parentName == nil ? nil : entityTable.entityNumbers
            for properties in entity.uniquenessConstraints {
                let columns = properties.compactMap { entityTable.column(for: $0)?.name }
                guard columns.count == properties.count, !columns.isEmpty else { continue }
                result.append(
                    StoreIndex(
                        name: modelIndexName("Z_\(entity.name)_UNIQUE_" + properties.joined(separator: "_")),
                        table: table.name,
                        columns: columns,
                        purpose: .uniqueness(entity: entity.name, properties: properties),
                        entityNumbers: partial
                    )
                )
            }
            for fetchIndex in entity.fetchIndexes {
                let columns = fetchIndex.elements.compactMap { entityTable.column(for: $0.property)?.name }
                guard columns.count == fetchIndex.elements.count, !columns.isEmpty else { continue }
                let descending = fetchIndex.elements.filter { !$0.isAscending }.compactMap { entityTable.column(for: $0.property)?.name }
                result.append(
                    StoreIndex(
                        name: modelIndexName("Z_\(entity.name)_\(fetchIndex.name)"),
                        table: table.name,
                        columns: columns,
                        purpose: .fetchIndex(entity: entity.name, name: fetchIndex.name),
                        descendingColumns: Set(descending),
                        entityNumbers: partial
                    )
                )
            }
        }
        return result
    }

    /// A model index's name as this engine keeps it (``SQLDialect/modelIndexName(_:)``).
    func modelIndexName(_ coreDataName: String) -> String {
        dialect.modelIndexName(coreDataName)
    }

    /// The index of a join table on its destination column (the primary key covers the source).
    func indexes(of join: JoinTable) -> [StoreIndex] {
        [
            StoreIndex(
                name: "\(join.name)_\(join.destinationColumn)_\(dialect.name("INDEX"))",
                table: join.name,
                columns: [join.destinationColumn, join.sourceColumn]
            )
        ]
    }

    /// `CREATE INDEX` for `index`; a model index in the form Core Data writes on SQLite
    /// (`CREATE UNIQUE INDEX Z_Car_UNIQUE_numberPlate ON ZCAR (ZNUMBERPLATE COLLATE BINARY ASC)`).
    func createIndexStatement(_ index: StoreIndex, ifNotExists: Bool = false) -> SQL {
        let columns: [SQL] = index.columns.map { column in
            guard index.isModelIndex else { return "\(identifier: column)" }
            return dialect.modelIndexColumn(column, descending: index.descendingColumns.contains(column))
        }
        let unique: SQL = index.isUnique ? "UNIQUE " : ""
        let ifAbsent: SQL = ifNotExists ? "IF NOT EXISTS " : ""
        var statement: SQL =
            "CREATE \(unique)INDEX \(ifAbsent)\(identifier: index.name) ON \(identifier: index.table) (\(columns.joined(separator: ", ")))"
        if let numbers = index.entityNumbers {
            // Entity numbers are the schema's own integers, written into the index's
            // definition (a partial index's predicate cannot take bound values).
            statement += " WHERE \(storeName: "Z_ENT") IN (\(literals: numbers))"
        }
        return statement
    }

    /// The `Z_PRIMARYKEY` rows of an empty store: one per entity, `Z_MAX` 0.
    public func primaryKeyRows() -> [(entity: Int, name: String, superEntity: Int)] {
        tables.values.sorted { $0.entityNumber < $1.entityNumber }.map { ($0.entityNumber, $0.entityName, $0.superNumber) }
    }
}
