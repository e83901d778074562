/// The tables a store has and their columns, by name in Core Data's upper-case spelling:
/// what a ``StoreSchema`` for that store takes the names of its join tables, hidden foreign
/// keys, order columns and entity-type columns from.
///
/// Core Data names some of a store's tables and columns by rules that have changed between
/// releases, or that pick one of two equally good names (which side of a many-to-many names
/// its join table). The store's own names are what its rows mean, so a schema for an
/// existing store reads them rather than demanding the names it would choose.
///
/// ```swift
/// let existing = try ExistingTables.read(from: connection)
/// existing.has(column: "Z2MODIFIERS", in: "ZCDCARTITEMMODIFIER") // true
/// let schema = StoreSchema(model: model, dialect: .sqlite, numbering: numbering, existing: existing)
/// ```
public struct ExistingTables: Sendable, Hashable {
    /// Table name → its column names, all upper case.
    public let columns: [String: Set<String>]
    /// The tables that keep a uniqueness constraint as a table constraint inside `CREATE
    /// TABLE`, as older releases of Core Data wrote it, upper case: a step in place rebuilds
    /// them so that the constraint takes the form a new store has, a named unique index.
    public let tablesWithUniqueTableConstraints: Set<String>

    /// `columns` with its names in any case; they are kept upper case.
    public init(columns: [String: Set<String>], tablesWithUniqueTableConstraints: Set<String> = []) {
        var upper: [String: Set<String>] = [:]
        for (table, names) in columns { upper[table.uppercased(), default: []].formUnion(names.map { $0.uppercased() }) }
        self.columns = upper
        self.tablesWithUniqueTableConstraints = Set(tablesWithUniqueTableConstraints.map { $0.uppercased() })
    }

    /// Whether the store has the table, named in any case.
    public func has(table: String) -> Bool { columns[table.uppercased()] != nil }

    /// Whether the store's table has the column, both named in any case.
    public func has(column: String, in table: String) -> Bool {
        columns[table.uppercased()]?.contains(column.uppercased()) == true
    }

    /// The first of `candidates` the store's table has, upper case.
    func first(of candidates: [String], in table: String) -> String? {
        guard let names = columns[table.uppercased()] else { return nil }
        return candidates.first { names.contains($0.uppercased()) }?.uppercased()
    }

    /// The columns of the store's table whose names `matching` accepts, upper case, sorted.
    func columns(of table: String, where matching: (String) -> Bool) -> [String] {
        (columns[table.uppercased()] ?? []).filter(matching).sorted()
    }

    /// Reads the tables and columns of the store `connection` is open on (a SQLite file, a
    /// PostgreSQL schema); only reads. `forMigration`: also which tables keep a uniqueness
    /// constraint inside `CREATE TABLE`, which only a migration's plan asks.
    ///
    /// - Throws: ``DatabaseError`` when the catalogue cannot be read.
    public static func read(from connection: any DatabaseConnection, forMigration: Bool = false) throws -> ExistingTables {
        var columns: [String: Set<String>] = [:]
        for row in try connection.rows(connection.dialect.columnListingQuery) {
            guard let table = row[0].text, let column = row[1].text else { continue }
            columns[table, default: []].insert(column)
        }
        let query = forMigration ? connection.dialect.uniqueTableConstraintListingQuery : nil
        let constrained = try query.map { try connection.rows($0).compactMap { $0[0].text } } ?? []
        return ExistingTables(columns: columns, tablesWithUniqueTableConstraints: Set(constrained))
    }
}
