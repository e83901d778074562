/// Works out the statements of an ``InPlaceMigration``.
///
/// The statements run in phases. First, while every table and column still has its source
/// name and every row its source `Z_ENT`, the data changes: references to rows that go are
/// cleared, those rows deleted, join tables filled, new columns computed and defaults set.
/// Then the structure follows: indexes, columns and tables dropped, columns and tables
/// renamed, `Z_ENT` renumbered, new tables and indexes created. Reading only source names
/// in the first half is what keeps the plan independent of the order of the renames.
struct InPlacePlanner {
    typealias Unsupported = InPlaceMigration.Unsupported
    typealias Step = InPlaceMigration.Step

    /// The phases, in the order they run.
    enum Phase: Int, CaseIterable {
        case clearReferences, deleteRows, fillJoinTables, computeColumns, linkOneToOne, fixValues
        case dropIndexes, dropColumns, dropTables, renameColumns, renameTables, renumberEntities, createTables, fillEntityTypes, rebuildTables
        case createIndexes
    }

    /// A source root table that becomes a destination root table in place.
    struct TablePair {
        let sourceTable: EntityTable
        let destinationTable: EntityTable
        /// The source entities whose rows stay, each with the destination entity they become.
        let entities: [(source: EntityDescription, destination: EntityDescription)]
    }

    /// A relationship as the destination model declares it.
    struct Side {
        let entity: EntityDescription
        let relationship: RelationshipDescription

        var key: String { "\(entity.name).\(relationship.name)" }
    }

    let analysis: InPlaceMappingAnalysis
    let d: any SQLDialect
    /// The layouts of the source and the destination store.
    let from: StoreSchema
    let to: StoreSchema

    var source: ManagedObjectModel { analysis.source }
    var destination: ManagedObjectModel { analysis.destination }

    private(set) var steps: [Phase: [Step]] = [:]
    /// Source root tables whose every row gets a new `Z_ENT`.
    var rewrittenTables: Set<String> = []
    var tablePairs: [TablePair] = []
    /// Every table name in use: the source store's, then temporary ones.
    var tableNames: Set<String>
    /// Table renames to make once the data is in place (source or temporary name → final).
    var tableRenames: [RenameOrder.Rename] = []
    /// Source tables (entity and join) that continue under a destination name, and how
    /// their surviving columns are named in the destination.
    var finalTableName: [String: String] = [:]
    var carriedColumns: [String: [String: String]] = [:]
    /// Source join tables that continue as a destination join table.
    var claimedJoinTables: Set<String> = []
    /// The values of foreign-key columns, by the destination relationship (`Entity.relationship`);
    /// for a to-many without an inverse, of its hidden key on the destination's rows.
    var foreignKeyValues: [String: ColumnValue] = [:]
    /// The values of ordering columns, by destination table and column (`ZPAGE.Z_FOK_BOOK`).
    var orderValues: [String: ColumnValue] = [:]
    /// One-to-one relationships whose second side is derived from the first once it is final.
    var oneToOnePairs: [(primary: Side, secondary: Side)] = []
    /// Where a destination column (`ZTABLE.ZCOLUMN`) is while the data changes: its table's
    /// source name and the column's current name.
    var locations: [String: (table: String, column: String)] = [:]
    /// Source tables (upper case) that keep a uniqueness constraint inside `CREATE TABLE`.
    let tablesWithUniqueTableConstraints: Set<String>
    /// Destination tables written anew at the end (``planTableRebuilds()``): none of their
    /// indexes is kept.
    var rebuiltTables: Set<String> = []

    /// What the step leaves as it was: the steps after it write every row anew (``InPlaceMigration/Keeping``).
    let keeping: InPlaceMigration.Keeping

    init(analysis: InPlaceMappingAnalysis, dialect: any SQLDialect, sourceLayout: StoreLayout? = nil, keeping: InPlaceMigration.Keeping = .nothing) {
        self.analysis = analysis
        self.d = dialect
        self.keeping = keeping
        let from = StoreSchema(model: analysis.source, dialect: dialect, layout: sourceLayout)
        self.from = from
        self.to = StoreSchema(
            model: analysis.destination,
            dialect: dialect,
            numbering: keeping.keepsEntityNumbers ? Self.continuedNumbering(from: from.numbering, analysis: analysis) : nil
        )
        self.tablesWithUniqueTableConstraints = sourceLayout?.existing.tablesWithUniqueTableConstraints ?? []
        let bookkeeping = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].map(dialect.name)
        tableNames = Set(from.rootTables.map(\.name) + from.allJoinTables.map(\.name) + bookkeeping)
    }

    /// The destination's entities numbered as the source entities they continue; a new entity
    /// after the store's largest number, in Core Data's order.
    static func continuedNumbering(from source: EntityNumbering, analysis: InPlaceMappingAnalysis) -> EntityNumbering {
        var numbers: [String: Int] = [:]
        for entity in analysis.destination.entities {
            if let sourceName = analysis.sourceOf[entity.name], let number = source.number(of: sourceName) { numbers[entity.name] = number }
        }
        var next = (source.numbers.values.max() ?? 0) + 1
        for entity in EntityNumbering.coreData(analysis.destination).inOrder where numbers[entity] == nil {
            numbers[entity] = next
            next += 1
        }
        return EntityNumbering(numbers: numbers)
    }

    /// Adds a statement to a phase; statements of a phase run in the order they were added.
    mutating func add(_ phase: Phase, _ step: Step) {
        steps[phase, default: []].append(step)
    }

    mutating func add(_ phase: Phase, _ sql: SQL) {
        add(phase, Step(sql: sql))
    }

    /// Drops a source table once the data has been read, freeing its name for the renames.
    mutating func dropTable(_ name: String) {
        add(.dropTables, "DROP TABLE \(identifier: name)")
        tableNames.remove(name)
    }

    /// The whole plan: tables paired, relationships and columns worked out, then the
    /// statements of every phase in order.
    mutating func plan() throws(Unsupported) -> InPlaceMigration {
        try pairTables()
        try planRelationships()
        for pair in tablePairs {
            try planColumns(of: pair)
        }
        linkOneToOnePairs()
        for table in to.rootTables where !tablePairs.contains(where: { $0.destinationTable.name == table.name }) {
            add(.createTables, to.createTableStatement(for: table))
        }
        for rename in try RenameOrder.order(tableRenames, existing: tableNames) {
            for statement in d.renameTableStatements(from: rename.from, to: rename.to) { add(.renameTables, statement) }
        }
        planEntityTypeColumns()
        planTableRebuilds()
        planIndexes()
        let roots = from.rootTables.map(\.name)
        return InPlaceMigration(
            steps: Phase.allCases.flatMap { steps[$0] ?? [] },
            primaryKeyRows: primaryKeyRows(),
            dialect: d,
            rewritesEveryRow: !roots.isEmpty && roots.allSatisfy(rewrittenTables.contains),
            keptNumbering: keeping.keepsEntityNumbers ? to.numbering : nil
        )
    }

    // MARK: Tables

    /// Pairs each source root table with the destination root table its rows end up in.
    ///
    /// Rows keep their primary keys, which are unique only within their table: rows of two
    /// source tables cannot share a destination table, and moving rows to another table
    /// would leave the foreign keys that point at them in the wrong table.
    mutating func pairTables() throws(Unsupported) {
        var destinationRoots: [String: Set<String>] = [:]
        var sourceRoots: [String: Set<String>] = [:]
        for (destinationName, sourceName) in analysis.sourceOf {
            guard let destinationEntity = destination.entity(named: destinationName), let sourceEntity = source.entity(named: sourceName) else {
                continue
            }
            let sourceRoot = source.rootEntity(of: sourceEntity).name
            let destinationRoot = destination.rootEntity(of: destinationEntity).name
            destinationRoots[sourceRoot, default: []].insert(destinationRoot)
            sourceRoots[destinationRoot, default: []].insert(sourceRoot)
        }
        for (destinationRoot, roots) in sourceRoots.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
            throw Unsupported(
                "rows of \(roots.sorted().joined(separator: " and ")) would share the table of \(destinationRoot); their primary keys overlap and need renumbering"
            )
        }
        for (sourceRoot, roots) in destinationRoots.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
            throw Unsupported(
                "the rows of \(sourceRoot)'s table would be split between the tables of \(roots.sorted().joined(separator: " and ")); moving rows between tables needs renumbering"
            )
        }

        for root in source.entities where root.parentName == nil {
            guard let sourceTable = from.table(for: root.name) else { continue }
            guard let destinationRoot = destinationRoots[root.name]?.first, let destinationTable = to.table(for: destinationRoot) else {
                // Nothing of this hierarchy survives.
                dropTable(sourceTable.name)
                continue
            }
            let hierarchy = source.entityAndDescendants(of: root)
            let entities = hierarchy.compactMap { entity in analysis.destinationEntity(of: entity).map { (source: entity, destination: $0) } }
            tablePairs.append(TablePair(sourceTable: sourceTable, destinationTable: destinationTable, entities: entities))
            let removed = hierarchy.filter { analysis.destinationOf[$0.name] == nil }.compactMap { from.table(for: $0.name)?.entityNumber }
            if !removed.isEmpty {
                add(.deleteRows, "DELETE FROM \(identifier: sourceTable.name) WHERE \(entityCondition(removed))")
            }
        }
    }

    /// `Z_ENT = 3` or `Z_ENT IN (3, 4)`, optionally for a table alias.
    func entityCondition(_ numbers: [Int], alias: String? = nil) -> SQL {
        let column: SQL = alias.map { "\(identifier: $0).\(storeName: "Z_ENT")" } ?? "\(storeName: "Z_ENT")"
        let sorted = Array(Set(numbers)).sorted()
        if sorted.count == 1 { return "\(column) = \(literal: sorted[0])" }
        return "\(column) IN (\(literals: sorted))"
    }

    /// The `Z_PRIMARYKEY` rows of the destination. A root's counter must stay above every
    /// key in its table, so it carries the highest counter of every entity whose rows it
    /// holds, even when the root itself is new.
    func primaryKeyRows() -> [InPlaceMigration.PrimaryKeyRow] {
        to.primaryKeyRows().map { row in
            var carried = analysis.sourceOf[row.name].map { [$0] } ?? []
            if row.superEntity == 0, let pair = tablePairs.first(where: { $0.destinationTable.entityName == row.name }) {
                for name in pair.entities.map(\.source.name) + [pair.sourceTable.entityName] where !carried.contains(name) {
                    carried.append(name)
                }
            }
            return InPlaceMigration.PrimaryKeyRow(entity: row.entity, name: row.name, superEntity: row.superEntity, carriedFrom: carried)
        }
    }

    // MARK: Table constraints

    /// A table that keeps a uniqueness constraint inside `CREATE TABLE`, as older releases
    /// of Core Data wrote it, is written anew once it has the destination's columns (SQLite
    /// drops no constraint from a table): the constraint then takes the form a new store of
    /// the destination has, a named unique index, or goes where the destination has none.
    /// Rows keep their keys; the table's indexes go with it and are created at the end.
    mutating func planTableRebuilds() {
        for pair in tablePairs where tablesWithUniqueTableConstraints.contains(pair.sourceTable.name.uppercased()) {
            let table = pair.destinationTable
            let temporary = RenameOrder.temporaryName(for: table.name, avoiding: tableNames, suffix: "_REBUILT")
            tableNames.insert(temporary)
            let columns = ([d.name("Z_PK"), d.name("Z_ENT"), d.name("Z_OPT")] + table.allColumns.map(\.name)).map { SQL("\(identifier: $0)") }.joined(
                separator: ", "
            )
            add(.rebuildTables, to.createTableStatement(for: table, named: temporary))
            add(.rebuildTables, "INSERT INTO \(identifier: temporary) (\(columns)) SELECT \(columns) FROM \(identifier: table.name)")
            add(.rebuildTables, "DROP TABLE \(identifier: table.name)")
            for statement in d.renameTableStatements(from: temporary, to: table.name) { add(.rebuildTables, statement) }
            rebuiltTables.insert(table.name)
        }
    }

    // MARK: Indexes

    /// Keeps an index only when it already has the destination's name, table and columns;
    /// every other index is dropped before the columns change and created at the end, so
    /// index names always match what a fresh store would have. A step that keeps entity
    /// numbers renames an index that fits under another name, where the engine can, and
    /// keeps it under its own where it cannot and a streamed step follows, which builds
    /// every index anew (``InPlaceMigration/Keeping``).
    mutating func planIndexes() {
        var sourceIndexes: [String: [StoreIndex]] = [:]
        for table in from.rootTables { sourceIndexes[table.name] = from.indexes(of: table) }
        for join in from.allJoinTables { sourceIndexes[join.name] = from.indexes(of: join) }
        let destinationIndexes = to.rootTables.flatMap { to.indexes(of: $0) } + to.allJoinTables.flatMap { to.indexes(of: $0) }
        var kept = Set<String>()
        let sourceIndexNames = Set(sourceIndexes.values.joined().map(\.name))
        // Where the engine renames an index (the names are placeholders: only whether it can).
        let mayRename = keeping.keepsEntityNumbers && d.renameIndexStatement(from: "", to: "") != nil
        for (table, finalName) in finalTableName.sorted(by: { $0.key < $1.key }) {
            let columns = carriedColumns[table] ?? [:]
            for index in sourceIndexes[table] ?? [] {
                let mapped = index.columns.map { columns[$0] }
                // Under another name only where no index of the destination takes its name,
                // and renamed only to a name no index of the store has.
                let mayKeepItsName = keeping == .entityNumbersAndIndexNames && !destinationIndexes.contains { $0.name == index.name }
                // A partial index names entity numbers, which the step may change: built anew.
                let match =
                    index.entityNumbers != nil || rebuiltTables.contains(finalName)
                    ? nil
                    : destinationIndexes.first { candidate in
                        (candidate.name == index.name || (mayRename && !sourceIndexNames.contains(candidate.name)) || mayKeepItsName)
                            && candidate.table == finalName
                            && candidate.columns.map(Optional.some) == mapped
                            && candidate.purpose == index.purpose && candidate.entityNumbers == nil
                            && candidate.descendingColumns == Set(index.descendingColumns.compactMap { columns[$0] })
                    }
                if let match {
                    kept.insert(match.name)
                    if match.name != index.name, mayRename, let rename = d.renameIndexStatement(from: index.name, to: match.name) {
                        add(.createIndexes, rename)
                    }
                } else {
                    // A model index an Apple store names otherwise (or lacks) is not there to drop.
                    add(.dropIndexes, "DROP INDEX \(raw: index.isModelIndex ? "IF EXISTS " : "")\(identifier: index.name)")
                }
            }
        }
        for index in destinationIndexes where !kept.contains(index.name) {
            add(.createIndexes, to.createIndexStatement(index))
        }
    }
}
