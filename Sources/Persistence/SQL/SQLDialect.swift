/// How a SQL engine spells what the framework says: names, placeholders, column types,
/// stored values, and the few operations the engines write differently. Each engine folder
/// (`Engine/SQLite/`, `Engine/PostgreSQL/`) holds one conforming type; everything outside
/// those folders asks the dialect instead of asking which engine it is on.
///
/// Core Data's SQLite stores use upper-case names (`ZBOOK`, `Z_PK`); the PostgreSQL store
/// uses the same names in lower case, which PostgreSQL needs no quotes for.
///
/// ```swift
/// let schema = StoreSchema(model: model, dialect: .postgres)
/// schema.dialect.name("ZBOOK")              // "zbook"
/// schema.dialect.columnType(for: .decimal)  // "numeric"
/// ```
public protocol SQLDialect: Sendable {
    /// The engine's name in messages: "SQLite", "PostgreSQL".
    var engineName: String { get }

    // MARK: Names and placeholders

    /// A table or column name as this engine stores it.
    func name(_ coreDataName: String) -> String

    /// The key under which the engine takes two names for one: names with equal keys
    /// collide in the store.
    func nameIdentity(_ name: String) -> String

    /// Why names that differ in the model can be one in the store, for a message that ends
    /// "would both be named X" (", as the store spells names in capitals").
    var nameFoldingReason: String { get }

    /// The placeholder for the `index`th (1-based) argument of a statement.
    func placeholder(_ index: Int) -> String

    /// A name as SQL text that names exactly it, quoted when it needs quotes (see ``SQL``).
    func quoteIfNeeded(_ name: String) -> String

    /// The most arguments one statement may take on this engine, with the oldest client
    /// library the framework supports. Every statement whose argument count grows with its
    /// input (multi-row `INSERT`s, `IN` lists) is cut to it through
    /// ``rowsPerStatement(argumentsPerRow:reserved:limit:)``.
    var parameterLimit: Int { get }

    // MARK: Types and values

    /// The column type for an attribute type.
    func columnType(for type: AttributeType) -> String

    /// The type of `Z_PK`, primary key included.
    var primaryKeyColumnType: String { get }

    /// The type of a column holding another row's `Z_PK`: foreign keys, join table columns,
    /// order keys.
    var keyColumnType: String { get }

    /// The type of `Z_ENT` and `Z_OPT`.
    var entityColumnType: String { get }

    /// A primary key the engine numbers itself, for tables of the framework's own.
    var generatedKeyColumnType: String { get }

    /// Whether a Float or a Date reads back rounded from what was written: PostgreSQL keeps
    /// a Float as a 4-byte `real` and a Date to the microsecond; SQLite keeps both as the
    /// double written. A fused pass carries such a value in memory only where the next step
    /// rounds it alike.
    var storesFloatsAndDatesRounded: Bool { get }

    /// A query of one integer column, `i`, holding 1 through `count` in order: generated
    /// rows written in one statement (`INSERT … SELECT … FROM (series)`).
    func integerSeries(through count: Int) -> String

    /// The type a `CAST` to a double names.
    var doubleType: String { get }

    /// Whether `CAST` of a fraction to an integer type rounds (rather than truncates, as
    /// SQLite and Core Data do).
    var integerCastRounds: Bool { get }

    /// Whether decimals are stored as text: compared and summed, they are then cast to
    /// numbers first.
    var storesDecimalsAsText: Bool { get }

    /// Whether a text column holds every Unicode scalar, NUL included. PostgreSQL's `text`
    /// cannot hold NUL (U+0000); a string with one is refused there rather than cut.
    var textHoldsNUL: Bool { get }

    /// Whether a migration step that would rewrite every row of every table in place (a
    /// new `Z_ENT` for each) runs faster as a rebuild (`INSERT … SELECT` into new tables). On PostgreSQL an `UPDATE`
    /// writes a new version of each row and of its index entries and leaves the old ones for
    /// `VACUUM`, so renumbering every row's `Z_ENT` takes about twice a rebuild; SQLite
    /// updates a row where it is. `false` unless a dialect says otherwise.
    var rebuildsRatherThanRewritingEveryRow: Bool { get }

    /// The stored form of a value of an attribute of type `type`.
    func databaseValue(_ value: AttributeValue, type: AttributeType) -> DatabaseValue

    /// The length in bytes of a binary value.
    func byteLength(_ sql: SQL) -> SQL

    /// A condition that holds when the column `sql`, not NULL, is stored in another form
    /// than `type` keeps; `nil` where the column's type enforces it.
    func storageMismatch(_ sql: SQL, type: AttributeType) -> SQL?

    // MARK: Expressions

    /// `lhs` and `rhs` differ, NULL being a value like any other (NSPredicate's `!=`).
    func isDistinct(_ lhs: SQL, _ rhs: SQL) -> SQL

    /// A constant of an attribute's type where nothing around it says its type (an operand
    /// of `coalesce` in an `INSERT … SELECT`): PostgreSQL would take a bound text for text.
    func typedConstant(_ value: DatabaseValue, type: AttributeType) -> SQL

    /// `sql`, a string, compared and sorted by code point whatever the database's locale.
    func codePointOrdered(_ sql: SQL) -> SQL

    /// What follows a sort term so that NULL sorts first, as in Core Data.
    func nullOrdering(ascending: Bool) -> String

    /// What a `SELECT` with an `OFFSET` and no `LIMIT` needs before the `OFFSET`.
    var offsetWithoutLimit: String { get }

    /// `sql`, of another type than text, as text (for a string operator).
    func castToText(_ sql: SQL) -> SQL

    /// `sql` folded the way `[c]` (flag 1) and `[d]` (flag 2) ask, as
    /// `persistence_fold` folds in Swift.
    func fold(_ sql: SQL, flags: Int32) -> SQL

    /// A string constant, bound, folded as ``fold(_:flags:)`` folds a column.
    func foldedConstant(_ text: String, flags: Int32) -> SQL

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS` or `LIKE` (`op`) of `lhs` (folded already)
    /// against a needle, with NSPredicate's meaning.
    func stringComparison(_ op: ComparisonOperator, _ lhs: SQL, _ needle: StringNeedle, flags: Int32) throws(ExpressionError) -> SQL

    /// `MATCHES`: the whole of `sql` matches the ICU regular expression `pattern`.
    func matches(_ sql: SQL, pattern: String, caseInsensitive: Bool) -> SQL

    // MARK: Statements

    /// The clause that ends a `SELECT` taking `lock` on the rows it reads.
    func lockingClause(_ lock: RowLock) -> String

    /// The statement that takes, first in a write transaction, the lock its writes of
    /// `table` would take, so that a migration locking it out commits before the
    /// transaction reads anything; `nil` when a write transaction holds the whole database
    /// from its start (SQLite's `BEGIN IMMEDIATE`).
    func writeLockStatement(table: String) -> SQL?

    /// `INSERT` of one row that does nothing when the row's key is there already.
    func insertIgnoringDuplicates(into table: String, columns: [String], values: [DatabaseValue]) -> SQL

    /// `CREATE TABLE` for `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE`, as Core Data creates them.
    var bookkeepingStatements: [SQL] { get }

    /// A query with one row when the database has the table `name` (a Core Data name,
    /// as `Z_METADATA`).
    func tableExistsQuery(_ name: String) -> SQL

    /// A query listing every table of the store by name, in name order.
    var tableListingQuery: SQL { get }

    /// A query listing every column of every table of the store as rows (table, column).
    var columnListingQuery: SQL { get }

    /// A query listing the tables that keep a uniqueness constraint as a table constraint
    /// inside `CREATE TABLE` (as older releases of Core Data wrote them), one row each; `nil`
    /// where the engine's stores are only ever written by this framework, which keeps
    /// uniqueness in named unique indexes.
    var uniqueTableConstraintListingQuery: SQL? { get }

    /// The statements that rename a table, with whatever the engine names after it.
    func renameTableStatements(from: String, to: String) -> [SQL]

    /// The statement that renames an index; `nil` where the engine cannot (SQLite: an index
    /// is dropped and built again under its new name).
    func renameIndexStatement(from: String, to: String) -> SQL?

    /// The names the engine gives a table's own objects besides those the schema names
    /// (PostgreSQL's `<table>_pkey`), as (name, what it is).
    func implicitNames(ofTable table: String) -> [(name: String, role: String)]

    /// A model index's (uniqueness constraint's, fetch index's) name as this engine keeps it.
    func modelIndexName(_ coreDataName: String) -> String

    /// One column of a model index, as Core Data writes it on this engine.
    func modelIndexColumn(_ column: String, descending: Bool) -> SQL

    /// The tables, columns, indexes and entity numbers of the store on `connection`, read
    /// from the engine's catalogue; only reads.
    func storeStructure(on connection: any DatabaseConnection) throws -> StoreStructure

    /// Whether a column holds only its declared type, so that a store's types are compared
    /// as spelt (PostgreSQL), not only by class (SQLite, whose columns take any value and
    /// whose stores Apple's Core Data spells its own way).
    var keepsColumnTypesStrictly: Bool { get }

    /// Whether a failed statement leaves the transaction unusable until rolled back (to a
    /// savepoint): then a statement whose failure is explained afterwards runs under one.
    var failedStatementAbortsTransaction: Bool { get }
}

/// The right side of a string comparison of ``SQLDialect/stringComparison(_:_:_:flags:)``.
public enum StringNeedle: Sendable {
    /// A constant, not folded yet.
    case constant(String)
    /// SQL of a string, folded already.
    case expression(SQL)
}

/// How a `SELECT` in a write transaction holds the rows it reads until the commit.
public enum RowLock: Sendable {
    /// The row may change but not go away: a row about to be pointed at by a new foreign
    /// key. Writers pointing at the same row do not wait for one another.
    case keepingItsKey
    /// The row is about to be deleted: writers that would point at it wait for the commit.
    case forDeleting
}

extension SQLDialect {
    /// `false`: a dialect rewrites rows in place unless it says otherwise.
    public var rebuildsRatherThanRewritingEveryRow: Bool { false }

    /// How many rows of `argumentsPerRow` arguments one statement takes, besides `reserved`
    /// arguments of its own: at least one, at most `limit` (1 000 by default, so a statement's
    /// text stays small), and never more than ``parameterLimit`` arguments in all.
    ///
    /// ```swift
    /// PostgresDialect().rowsPerStatement(argumentsPerRow: 200)           // 37
    /// PostgresDialect().rowsPerStatement(argumentsPerRow: 1, reserved: 1) // 1 000
    /// ```
    public func rowsPerStatement(argumentsPerRow: Int, reserved: Int = 0, limit: Int = 1_000) -> Int {
        max(1, min(limit, (parameterLimit - reserved) / max(argumentsPerRow, 1)))
    }

    /// `items` cut into runs that each fit one statement (see
    /// ``rowsPerStatement(argumentsPerRow:reserved:limit:)``): the keys of an `IN` list, the
    /// rows of a multi-row `INSERT`.
    ///
    /// ```swift
    /// for keys in dialect.statementChunks(ids, limit: 500) {
    ///     let sql: SQL = "SELECT … WHERE \(storeName: "Z_PK") IN (\(list: keys.map(DatabaseValue.integer)))"
    ///     …
    /// }
    /// ```
    public func statementChunks<Items: RandomAccessCollection>(
        _ items: Items,
        argumentsPerItem: Int = 1,
        reserved: Int = 0,
        limit: Int = 1_000
    ) -> [Items.SubSequence] {
        let size = rowsPerStatement(argumentsPerRow: argumentsPerItem, reserved: reserved, limit: limit)
        var chunks: [Items.SubSequence] = []
        var start = items.startIndex
        while start != items.endIndex {
            let end = items.index(start, offsetBy: size, limitedBy: items.endIndex) ?? items.endIndex
            chunks.append(items[start..<end])
            start = end
        }
        return chunks
    }

    /// Whether `other` is this engine's dialect.
    public func isSame(as other: any SQLDialect) -> Bool { engineName == other.engineName }
}

extension SQLDialect where Self == SQLiteDialect {
    /// SQLite's dialect, where a generic parameter takes one: `StoreSchema(model: m, dialect: .sqlite)`.
    package static var sqlite: SQLiteDialect { SQLiteDialect() }
}

extension SQLDialect where Self == PostgresDialect {
    /// PostgreSQL's dialect, where a generic parameter takes one: `StoreSchema(model: m, dialect: .postgres)`.
    package static var postgres: PostgresDialect { PostgresDialect() }
}
