/// The shape of a store's tables: what is left to tell a model version by when the store's
/// entity version hashes are Apple's, and what every migrated store is checked against
/// (``SQLDialect/storeStructure(on:)`` reads it on either engine).
///
/// Core Data computes its entity version hashes in a way only Apple knows, so a store
/// written by Apple's Core Data matches none of our versions by hash. Its tables still say
/// which version wrote it: ``StoreStructure/read(from:)`` reads the entity tables (`Z…`,
/// not `Z_…`) with their columns and type classes, the join tables, the entity numbers of
/// `Z_PRIMARYKEY` and the indexed columns; ``StoreStructure/init(schema:)`` is what our
/// schema generator makes of a model version. ``differences(from:)`` compares the two.
///
/// Column order does not count (Core Data orders columns its own way), nor does the
/// spelling of a type within its class (`VARCHAR(255)` is text, `DECIMAL` and our
/// `DECIMAL TEXT` are both decimal). Indexes never decide a version — they say nothing of
/// where data is, and Apple's own migrations leave older versions' indexes behind — and
/// neither do tables beside Core Data's (persistent history, CloudKit's): ``notes(comparedWith:)``
/// names them. A structure for a store that exists is made from the model's schema laid
/// out with the store's own names (``StoreSchema/init(model:dialect:numbering:existing:)``),
/// so a join table or order column Core Data may name two ways fits either way.
///
/// ```swift
/// let store = try StoreStructure.read(from: connection)
/// let expected = StoreStructure(schema: StoreSchema(model: v3, dialect: .sqlite))
/// store.differences(from: expected) // [] when the store has version 3's tables
/// ```
public struct StoreStructure: Sendable, Hashable {
    /// What a declared column type holds, as SQLite reads declared types.
    public enum TypeClass: String, Sendable, Hashable {
        /// The classes, in the order `init(declaredType:)` tries them: `decimal` (`DECIMAL`, `NUMERIC`), `timestamp`
        /// (`TIMESTAMP`, `DATE`), `integer` (`INT…`, `BOOLEAN`), `real` (`FLOAT`, `REAL`, `DOUBLE`), `text` (`CHAR`,
        /// `TEXT`, `CLOB`), `blob`, and `other` for any other type.
        case integer, real, decimal, text, timestamp, blob, other

        /// The class of a declared type (`VARCHAR(255)` → text).
        public init(declaredType: String) {
            let type = declaredType.uppercased()
            if type.contains("DECIMAL") || type.contains("NUMERIC") {
                self = .decimal
            } else if type.contains("TIMESTAMP") || type.contains("DATE") {
                self = .timestamp
            } else if type.contains("INT") || type == "BOOLEAN" {
                self = .integer
            } else if type.contains("FLOAT") || type.contains("REAL") || type.contains("DOUBLE") {
                self = .real
            } else if type.contains("CHAR") || type.contains("TEXT") || type.contains("CLOB") {
                self = .text
            } else if type.contains("BLOB") {
                self = .blob
            } else {
                self = .other
            }
        }
    }

    /// Entity table name (`ZPOST`) → column name → type class, `Z_PK`, `Z_ENT`, `Z_OPT` included.
    public var entityTables: [String: [String: TypeClass]]
    /// Join table name (`Z_1TAGS`) → its column names.
    public var joinTables: [String: Set<String>]
    /// `Z_PRIMARYKEY`: entity number → entity name.
    public var entities: [Int: String]
    /// Entity number → the renaming identifier of a model's renamed entity: Core Data keeps
    /// the old name in `Z_PRIMARYKEY` after an inferred rename, so a store may say either.
    public var formerEntityNames: [Int: String] = [:]
    /// The `TABLE.COLUMN`s that lead an index. For a structure made from a schema: the
    /// foreign keys and join-table columns our DDL indexes; a store may have more.
    public var indexedColumns: Set<String>
    /// The indexes of uniqueness constraints and fetch indexes, by name (`Z_Car_UNIQUE_numberPlate`)
    /// → what they index (`UNIQUE ZCAR (ZNUMBERPLATE)`).
    public var modelIndexes: [String: String] = [:]
    /// Tables outside Core Data's `Z` names (`ATRANSACTION`, `ACHANGE` of persistent history,
    /// CloudKit's `ANSCK…`): no model version has them; they are kept.
    public var otherTables: Set<String>
    /// Uniqueness constraints written as table constraints inside `CREATE TABLE`, as older
    /// releases of Core Data write them (`CONSTRAINT ZCODE_ZREGION UNIQUE (ZCODE, ZREGION)`),
    /// described as ``modelIndexes`` describes an index: `UNIQUE ZCAR (ZCODE, ZREGION)`.
    public var uniqueTableConstraints: Set<String> = []
    /// Every index of the entity tables whatever its name, described as ``modelIndexes``
    /// describes one: a model's index made under another name (PostgreSQL names the
    /// indexes of a table copied with `LIKE … INCLUDING ALL` its own way) is still there.
    public var indexDefinitions: Set<String> = []
    /// Entity table → column → its type exactly as the engine spells it, where the engine
    /// keeps types strictly (PostgreSQL: `bigint`, `double precision`, `uuid`); compared
    /// where both structures have them, beside the type classes.
    public var exactColumnTypes: [String: [String: String]] = [:]

    /// The tables and columns, for laying a model's schema out with the store's own names.
    public var existingTables: ExistingTables {
        var columns: [String: Set<String>] = joinTables
        for (table, types) in entityTables { columns[table] = Set(types.keys) }
        return ExistingTables(columns: columns, tablesWithUniqueTableConstraints: Set(uniqueTableConstraints.map(Self.table(of:))))
    }

    /// A structure from its parts, as read from a store; ``StoreStructure/read(from:)`` reads one.
    public init(
        entityTables: [String: [String: TypeClass]],
        joinTables: [String: Set<String>],
        entities: [Int: String],
        indexedColumns: Set<String>,
        otherTables: Set<String> = []
    ) {
        self.entityTables = entityTables
        self.joinTables = joinTables
        self.entities = entities
        self.indexedColumns = indexedColumns
        self.otherTables = otherTables
    }

    /// The structure our DDL gives a model version (``StoreSchema/createStatements(includingIndexes:)``).
    public init(schema: StoreSchema) {
        var tables: [String: [String: TypeClass]] = [:]
        var exactTypes: [String: [String: String]] = [:]
        var indexed: Set<String> = []
        var modelIndexes: [String: String] = [:]
        for table in schema.rootTables {
            var columns: [String: TypeClass] = [:]
            for name in ["Z_PK", "Z_ENT", "Z_OPT"] { columns[schema.dialect.name(name)] = .integer }
            for column in table.allColumns { columns[column.name] = TypeClass(declaredType: schema.columnType(of: column)) }
            tables[table.name] = columns
            if schema.dialect.keepsColumnTypesStrictly {
                var exact: [String: String] = [:]
                exact[schema.dialect.name("Z_PK")] = schema.dialect.keyColumnType
                for name in ["Z_ENT", "Z_OPT"] { exact[schema.dialect.name(name)] = schema.dialect.entityColumnType }
                for column in table.allColumns { exact[column.name] = schema.columnType(of: column) }
                exactTypes[table.name] = exact
            }
            for index in schema.indexes(of: table) {
                if index.isModelIndex {
                    modelIndexes[index.name] = Self.definition(
                        unique: index.isUnique,
                        table: table.name,
                        columns: index.columns.map { ($0, index.descendingColumns.contains($0)) },
                        partial: index.entityNumbers != nil
                    )
                } else if index.columns != [schema.dialect.name("Z_ENT")] {
                    indexed.insert("\(table.name).\(index.columns[0])")
                }
            }
        }
        var joins: [String: Set<String>] = [:]
        for join in schema.allJoinTables {
            joins[join.name] = Set(join.columns)
            for index in schema.indexes(of: join) { indexed.insert("\(join.name).\(index.columns[0])") }
        }
        var entities: [Int: String] = [:]
        var formerNames: [Int: String] = [:]
        for row in schema.primaryKeyRows() {
            entities[row.entity] = row.name
            if let former = schema.model.entity(named: row.name)?.renamingIdentifier, former != row.name { formerNames[row.entity] = former }
        }
        self.init(entityTables: tables, joinTables: joins, entities: entities, indexedColumns: indexed)
        self.formerEntityNames = formerNames
        self.modelIndexes = modelIndexes
        self.exactColumnTypes = exactTypes
    }

    /// How ``modelIndexes`` describes an index: `UNIQUE ZCAR (ZMAKER, ZNUMBERPLATE DESC) WHERE Z_ENT IN …`.
    static func definition(unique: Bool, table: String, columns: [(name: String, descending: Bool)], partial: Bool) -> String {
        let list = columns.map { $0.descending ? "\($0.name) DESC" : $0.name }.joined(separator: ", ")
        return (unique ? "UNIQUE " : "") + "\(table) (\(list))" + (partial ? " WHERE Z_ENT IN …" : "")
    }

    /// Whether Core Data names an index so for a uniqueness constraint or a fetch index:
    /// `Z_<entity>_…`, which no look-up index (`ZCAR_ZOWNER_INDEX`) nor a join table's
    /// (`Z_1TAGS_…`) is named like.
    static func isModelIndexName(_ name: String) -> Bool {
        name.hasPrefix("Z_") && name.dropFirst(2).first.map { $0.isLetter } == true
    }

    /// The table of an index ``definition(unique:table:columns:partial:)``.
    private static func table(of definition: String) -> String {
        String(definition.split(separator: " ").first { $0 != "UNIQUE" } ?? "")
    }

    /// What keeps this store (`self`) from having `expected`'s structure, one line per
    /// difference, in a stable order; empty when they fit.
    ///
    /// ```swift
    /// store.differences(from: expected)
    /// // ["ZPOST has a column ZCOLOR (text) the model does not have", "ZPOST lacks the column ZHEXCOLOR (text)"]
    /// ```
    public func differences(from expected: StoreStructure) -> [String] {
        var result: [String] = []
        for table in Set(entityTables.keys).union(expected.entityTables.keys).sorted() {
            guard let columns = entityTables[table] else {
                result.append("the store lacks the table \(table)")
                continue
            }
            guard let wanted = expected.entityTables[table] else {
                result.append("the store has a table \(table) the model does not have")
                continue
            }
            for column in Set(columns.keys).union(wanted.keys).sorted() {
                switch (columns[column], wanted[column]) {
                case (let have?, nil): result.append("\(table) has a column \(column) (\(have.rawValue)) the model does not have")
                case (nil, let want?): result.append("\(table) lacks the column \(column) (\(want.rawValue))")
                case (let have?, let want?) where have != want:
                    result.append("\(table).\(column) holds \(have.rawValue) in the store, \(want.rawValue) in the model")
                case (_?, _?):
                    if let have = exactColumnTypes[table]?[column], let want = expected.exactColumnTypes[table]?[column], have != want {
                        result.append("\(table).\(column) is \(have) in the store, \(want) in the model")
                    }
                default: break
                }
            }
        }
        for table in Set(joinTables.keys).union(expected.joinTables.keys).sorted() {
            switch (joinTables[table], expected.joinTables[table]) {
            case (nil, _): result.append("the store lacks the join table \(table)")
            case (_, nil): result.append("the store has a join table \(table) the model does not have")
            case (let have?, let want?) where have != want:
                result.append(
                    "the join table \(table) has the columns \(have.sorted().joined(separator: ", ")), the model \(want.sorted().joined(separator: ", "))"
                )
            default: break
            }
        }
        let sameEntities =
            Set(entities.keys) == Set(expected.entities.keys)
            && entities.allSatisfy { $0.value == expected.entities[$0.key] || $0.value == expected.formerEntityNames[$0.key] }
        if !sameEntities {
            func list(_ entities: [Int: String]) -> String {
                entities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            result.append("Z_PRIMARYKEY numbers the entities \(list(entities)), the model \(list(expected.entities))")
        }
        return result
    }

    /// The indexes `expected` makes that the store lacks, or has on other columns: a look-up
    /// index of a foreign key or join table (by its leading column), a uniqueness
    /// constraint's or fetch index's index by its columns, their order and direction, and
    /// whether it is unique and partial (or, on SQLite, the table constraint older releases
    /// of Core Data write for it), under its name or another. One line each, in a stable order. Indexes the store has beside them (an older
    /// version's, one of its own) are not counted: ``notes(comparedWith:)`` names them.
    ///
    /// ```swift
    /// migrated.lackingIndexes(comparedWith: expected)
    /// // ["the store lacks the index z_publication_unique_isbn on UNIQUE zpublication (zisbn) of the model's constraints and fetch indexes"]
    /// ```
    public func lackingIndexes(comparedWith expected: StoreStructure) -> [String] {
        var result: [String] = []
        for column in expected.indexedColumns.subtracting(indexedColumns).sorted() {
            let table = String(column.prefix { $0 != "." })
            guard entityTables[table] != nil || joinTables[table] != nil else { continue }
            result.append("\(column) has no index; the model's foreign keys are indexed")
        }
        for (name, want) in expected.modelIndexes.sorted(by: { $0.key < $1.key }) {
            guard entityTables[Self.table(of: want)] != nil, !uniqueTableConstraints.contains(want) else { continue }
            if let have = modelIndexes[name] {
                if have != want { result.append("the index \(name) is on \(have) in the store, on \(want) in the model") }
            } else if !modelIndexes.values.contains(want), !indexDefinitions.contains(want) {
                result.append("the store lacks the index \(name) on \(want) of the model's constraints and fetch indexes")
            }
        }
        return result
    }

    /// What the store has or lacks that does not decide its version, one line per thing, in
    /// a stable order: tables beside Core Data's, and every index difference (a look-up
    /// index the model's keys would have, a uniqueness constraint's or fetch index's index),
    /// on the tables both have.
    ///
    /// ```swift
    /// store.notes(comparedWith: expected)
    /// // ["Z_1FAVORITES.Z_1FAVORITES has no index; the model's foreign keys are indexed"]
    /// ```
    public func notes(comparedWith expected: StoreStructure) -> [String] {
        var result: [String] = []
        for table in otherTables.subtracting(expected.otherTables).sorted() {
            result.append("the store has a table \(table) beside Core Data's model tables (\(Self.owner(ofOtherTable: table))); it is kept as it is")
        }
        // Only where both have the table: a missing table is reported once, above.
        for column in expected.indexedColumns.subtracting(indexedColumns).sorted() {
            let table = String(column.prefix { $0 != "." })
            guard entityTables[table] != nil || joinTables[table] != nil else { continue }
            result.append("\(column) has no index; the model's foreign keys are indexed")
        }
        // Uniqueness-constraint and fetch indexes, both ways, on the tables both have.
        for name in Set(modelIndexes.keys).union(expected.modelIndexes.keys).sorted() {
            switch (modelIndexes[name], expected.modelIndexes[name]) {
            case (let have?, nil) where expected.entityTables[Self.table(of: have)] != nil:
                result.append("the store has the index \(name) on \(have), which the model's constraints and fetch indexes do not make")
            case (nil, let want?) where entityTables[Self.table(of: want)] != nil && !uniqueTableConstraints.contains(want):
                result.append("the store lacks the index \(name) on \(want) of the model's constraints and fetch indexes")
            case (let have?, let want?) where have != want:
                result.append("the index \(name) is on \(have) in the store, on \(want) in the model")
            default: break
            }
        }
        return result
    }

    /// Who keeps a table beside Core Data's model tables, for a note.
    static func owner(ofOtherTable table: String) -> String {
        let name = table.uppercased()
        if ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING", "AQUERYGENERATION"].contains(name) { return "Core Data's persistent history" }
        if name.hasPrefix("ANSCK") { return "Core Data's CloudKit mirroring" }
        return "not Core Data's model"
    }
}
