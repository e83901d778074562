/// What a schema for an existing store takes from the store itself: how its entities are
/// numbered (`Z_PRIMARYKEY`) and which tables and columns it has (``ExistingTables``).
///
/// ```swift
/// let layout = try StoreLayout.read(from: connection, model: model)
/// let schema = StoreSchema(model: model, dialect: connection.dialect, layout: layout)
/// ```
public struct StoreLayout: Sendable, Hashable {
    /// How the store numbers its entities (`Z_ENT`, from `Z_PRIMARYKEY`).
    public let numbering: EntityNumbering
    /// The tables and columns the store has.
    public let existing: ExistingTables

    /// A layout from what has been read of a store; ``StoreLayout/read(from:model:forMigration:)`` reads it.
    public init(numbering: EntityNumbering, existing: ExistingTables) {
        self.numbering = numbering
        self.existing = existing
    }

    /// The layout of the store `connection` is open on, for `model`; only reads.
    /// `forMigration`: with what only a migration's plan asks (``ExistingTables/read(from:forMigration:)``).
    ///
    /// - Throws: ``DatabaseError`` when `Z_PRIMARYKEY` or the catalogue cannot be read.
    public static func read(from connection: any DatabaseConnection, model: ManagedObjectModel, forMigration: Bool = false) throws -> StoreLayout {
        StoreLayout(
            numbering: try EntityNumbering.read(from: connection, model: model),
            existing: try ExistingTables.read(from: connection, forMigration: forMigration)
        )
    }
}

extension StoreSchema {
    /// The schema of an existing store laid out as `layout` says, or of a new one (`nil`).
    public init(model: ManagedObjectModel, dialect: some SQLDialect, layout: StoreLayout?) {
        self.init(model: model, dialect: dialect, numbering: layout?.numbering, existing: layout?.existing)
    }

    /// What this schema's tables are named: a copy of its store in another engine takes them.
    public var layout: StoreLayout {
        var columns: [String: Set<String>] = [:]
        for table in rootTables {
            columns[table.name] = Set([dialect.name("Z_PK"), dialect.name("Z_ENT"), dialect.name("Z_OPT")] + table.allColumns.map(\.name))
        }
        for join in allJoinTables { columns[join.name] = Set(join.columns) }
        return StoreLayout(numbering: numbering, existing: ExistingTables(columns: columns))
    }
}
