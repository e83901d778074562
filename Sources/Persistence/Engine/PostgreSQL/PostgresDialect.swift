import Foundation

/// PostgreSQL's spelling of the framework's SQL.
///
/// Core Data's names in lower case (`zbook`), which need no quotes; `$n` placeholders;
/// PostgreSQL's own column types (dates as `timestamp with time zone`, decimals as exact
/// `numeric`, UUIDs as `uuid`); string operators through built-ins (`lower`, `normalize`,
/// `starts_with`, `strpos`, `LIKE`, `~`), comparing and sorting strings by code point
/// (`COLLATE "C"`), as SQLite does.
///
/// ```swift
/// PostgresDialect().databaseValue(.bool(true), type: .boolean)  // .text("true")
/// PostgresDialect().name("Z_PK")                                 // "z_pk"
/// ```
package struct PostgresDialect: SQLDialect, Hashable {
    package init() {}

    package var engineName: String { "PostgreSQL" }

    package func name(_ coreDataName: String) -> String { coreDataName.lowercased() }

    package func nameIdentity(_ name: String) -> String { name.prefix(utf8Bytes: ManagedObjectModel.longestStoreName) }

    package var nameFoldingReason: String { " on PostgreSQL, where the store spells names in lower case" }

    package func placeholder(_ index: Int) -> String { "$\(index)" }

    /// PostgreSQL folds an unquoted name to lower case, so only a lower-case plain name
    /// stands without quotes: `zbook`, but `"ZBOOK"` and `"Book"`.
    package func quoteIfNeeded(_ name: String) -> String {
        isPlainName(name, letters: 0x61...0x7A, keywords: Self.keywords) ? name : name.quotedIdentifier
    }

    /// PostgreSQL's reserved key words and those that cannot name a function or type
    /// (the documentation's "SQL Key Words" appendix): a name that is one is quoted.
    static let keywords: Set<String> = [
        "ALL", "ANALYSE", "ANALYZE", "AND", "ANY", "ARRAY", "AS", "ASC", "ASYMMETRIC", "AUTHORIZATION", "BETWEEN", "BIGINT",
        "BINARY", "BIT", "BOOLEAN", "BOTH", "CASE", "CAST", "CHAR", "CHARACTER", "CHECK", "COALESCE", "COLLATE", "COLLATION",
        "COLUMN", "CONCURRENTLY", "CONSTRAINT", "CREATE", "CROSS", "CURRENT_CATALOG", "CURRENT_DATE", "CURRENT_ROLE",
        "CURRENT_SCHEMA", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER", "DEC", "DECIMAL", "DEFAULT", "DEFERRABLE", "DESC",
        "DISTINCT", "DO", "ELSE", "END", "EXCEPT", "EXISTS", "EXTRACT", "FALSE", "FETCH", "FLOAT", "FOR", "FOREIGN", "FREEZE",
        "FROM", "FULL", "GRANT", "GREATEST", "GROUP", "GROUPING", "HAVING", "ILIKE", "IN", "INITIALLY", "INNER", "INOUT", "INT",
        "INTEGER", "INTERSECT", "INTERVAL", "INTO", "IS", "ISNULL", "JOIN", "LATERAL", "LEADING", "LEAST", "LEFT", "LIKE", "LIMIT",
        "LOCALTIME", "LOCALTIMESTAMP", "NATIONAL", "NATURAL", "NCHAR", "NONE", "NORMALIZE", "NOT", "NOTNULL", "NULL", "NULLIF",
        "NUMERIC", "OFFSET", "ON", "ONLY", "OR", "ORDER", "OUT", "OUTER", "OVERLAPS", "OVERLAY", "PLACING", "POSITION",
        "PRECISION", "PRIMARY", "REAL", "REFERENCES", "RETURNING", "RIGHT", "ROW", "SELECT", "SESSION_USER", "SETOF", "SIMILAR",
        "SMALLINT", "SOME", "SUBSTRING", "SYMMETRIC", "SYSTEM_USER", "TABLE", "TABLESAMPLE", "THEN", "TIME", "TIMESTAMP", "TO",
        "TRAILING", "TREAT", "TRIM", "TRUE", "UNION", "UNIQUE", "USER", "USING", "VALUES", "VARCHAR", "VARIADIC", "VERBOSE",
        "WHEN", "WHERE", "WINDOW", "WITH",
    ]

    /// The server takes 65 535, but libpq before its 2026 releases (15.18, the one in
    /// Debian 12's main archive, among them) drops the session when a statement's
    /// description (a ParameterDescription message of 4 bytes per argument and 6 more) is
    /// longer than 30 000 bytes: 7 498 arguments at most.
    package var parameterLimit: Int { 7_498 }

    package func columnType(for type: AttributeType) -> String {
        switch type {
        case .integer16: "smallint"
        case .integer32: "integer"
        case .integer64: "bigint"
        case .boolean: "boolean"
        case .double: "double precision"
        case .float: "real"
        case .decimal: "numeric"
        case .string, .uri: "text"
        case .date: "timestamp with time zone"
        // Only a transient is Undefined, and transients have no column.
        case .binary, .transformable, .undefined: "bytea"
        case .uuid: "uuid"
        }
    }

    package var primaryKeyColumnType: String { "bigint PRIMARY KEY" }
    package var keyColumnType: String { "bigint" }
    package var entityColumnType: String { "integer" }
    package var generatedKeyColumnType: String { "BIGSERIAL PRIMARY KEY" }
    package var storesFloatsAndDatesRounded: Bool { true }
    package func integerSeries(through count: Int) -> String { "SELECT i FROM generate_series(1, CAST(\(count) AS bigint)) AS s(i)" }
    package var doubleType: String { "double precision" }
    package var integerCastRounds: Bool { true }
    package var storesDecimalsAsText: Bool { false }
    package var textHoldsNUL: Bool { false }
    package var rebuildsRatherThanRewritingEveryRow: Bool { true }

    /// Values go as `int8`, `float8` or `bytea`, or as text the server reads as the column's
    /// type: booleans `true`/`false`, dates as timestamps (microseconds kept), UUIDs in
    /// canonical form, decimals with every digit. Values of another kind than the
    /// attribute's are converted the way SQLite would store them, where that makes sense.
    package func databaseValue(_ value: AttributeValue, type: AttributeType) -> DatabaseValue {
        switch (value, type) {
        case (.null, _): return .null
        case (_, .boolean):
            if let flag = value.integerValue ?? value.doubleValue.map({ Int64($0) }) { return .text(flag == 0 ? "false" : "true") }
        case (.date(let v), .date):
            return .text(PostgresTimestamp.text(secondsSinceReferenceDate: v.timeIntervalSinceReferenceDate))
        case (_, .date):
            // A number is seconds since 2001-01-01, as a date is in a SQLite store.
            if let seconds = value.doubleValue { return .text(PostgresTimestamp.text(secondsSinceReferenceDate: seconds)) }
        case (.uuid(let v), _):
            return .text(v.uuidString.lowercased())
        case (.binary(let v), .uuid) where v.count == 16:
            return .text(UUID(uuid: v.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString.lowercased())
        case (.bool(let v), _):
            return .integer(v ? 1 : 0)
        default: break
        }
        return ValueCoding.coreDataValue(value, type: type)
    }

    package func byteLength(_ sql: SQL) -> SQL { "octet_length(\(sql))" }

    /// A column holds only values of its type.
    package func storageMismatch(_ sql: SQL, type: AttributeType) -> SQL? { nil }

    package func isDistinct(_ lhs: SQL, _ rhs: SQL) -> SQL { "\(lhs) IS DISTINCT FROM \(rhs)" }

    /// By code point like SQLite's default `BINARY` collation, not by the database's locale.
    package func codePointOrdered(_ sql: SQL) -> SQL { "\(sql) COLLATE \"C\"" }

    /// PostgreSQL sorts NULL last by default, Core Data first.
    package func nullOrdering(ascending: Bool) -> String { ascending ? " NULLS FIRST" : " NULLS LAST" }

    package func typedConstant(_ value: DatabaseValue, type: AttributeType) -> SQL { "CAST(\(value) AS \(raw: columnType(for: type)))" }

    package var offsetWithoutLimit: String { "" }

    package func castToText(_ sql: SQL) -> SQL { "CAST(\(sql) AS text)" }

    /// `lower`, and dropping combining marks after canonical decomposition
    /// (`normalize(…, NFD)`), so no extension such as `unaccent` is needed.
    package func fold(_ sql: SQL, flags: Int32) -> SQL {
        var folded = sql
        if flags & 2 != 0 { folded = "regexp_replace(normalize(\(folded), NFD), '\(raw: Self.combiningMarks)', '', 'g')" }
        if flags & 1 != 0 { folded = "lower(\(folded))" }
        return folded
    }

    /// The Unicode blocks of combining diacritical marks, as a PostgreSQL regular expression.
    static let combiningMarks = #"[\u0300-\u036F\u1AB0-\u1AFF\u1DC0-\u1DFF\u20D0-\u20FF\uFE20-\uFE2F]"#

    /// Folded in SQL, so both sides of a comparison fold alike.
    package func foldedConstant(_ text: String, flags: Int32) -> SQL {
        fold("CAST(\(text) AS text)", flags: flags)
    }

    package func stringComparison(_ op: ComparisonOperator, _ lhs: SQL, _ needle: StringNeedle, flags: Int32) throws(ExpressionError) -> SQL {
        let rhs: SQL
        switch needle {
        case .constant(let text):
            if op == .like {
                return "\(lhs) LIKE \(fold("CAST(\(Self.likePattern(fromPredicateLike: text)) AS text)", flags: flags))"
            }
            rhs = foldedConstant(text, flags: flags)
        case .expression(let sql):
            rhs = sql
        }
        switch op {
        case .beginsWith: return "starts_with(\(lhs), \(rhs))"
        case .endsWith: return "right(\(lhs), length(\(rhs))) = \(rhs)"
        default: return "strpos(\(lhs), \(rhs)) > 0"
        }
    }

    /// The whole string must match, as in NSPredicate; `~*` ignores case.
    package func matches(_ sql: SQL, pattern: String, caseInsensitive: Bool) -> SQL {
        "\(sql) \(raw: caseInsensitive ? "~*" : "~") \("^(?:\(pattern))$")"
    }

    /// `ROW EXCLUSIVE`, the lock of an `INSERT`, `UPDATE` or `DELETE` (a save that inserts
    /// takes it on `Z_PRIMARYKEY` anyway): it needs one of those privileges on the table.
    package func writeLockStatement(table: String) -> SQL? {
        "LOCK TABLE \(identifier: table) IN ROW EXCLUSIVE MODE"
    }

    /// PostgreSQL runs writers side by side (several service replicas on one database), so a
    /// row read in one transaction may be deleted by another before the commit.
    package func lockingClause(_ lock: RowLock) -> String {
        switch lock {
        case .keepingItsKey: " FOR KEY SHARE"
        case .forDeleting: " FOR UPDATE"
        }
    }

    package func insertIgnoringDuplicates(into table: String, columns: [String], values: [DatabaseValue]) -> SQL {
        "INSERT INTO \(identifier: table) (\(columns.map { "\(identifier: $0)" as SQL }.joined(separator: ", "))) VALUES (\(list: values)) ON CONFLICT DO NOTHING"
    }

    package var bookkeepingStatements: [SQL] {
        [
            "CREATE TABLE z_primarykey (z_ent integer PRIMARY KEY, z_name text, z_super integer, z_max bigint)",
            "CREATE TABLE z_metadata (z_version integer PRIMARY KEY, z_uuid varchar(255), z_plist bytea)",
            "CREATE TABLE z_modelcache (z_content bytea)",
        ]
    }

    /// The catalog directly: information_schema's views cost a millisecond or more per look.
    package func tableExistsQuery(_ name: String) -> SQL {
        """
        SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
        WHERE n.nspname = current_schema() AND c.relname = \(name.lowercased()) AND c.relkind IN ('r', 'p')
        """
    }

    package var tableListingQuery: SQL {
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name"
    }

    package var columnListingQuery: SQL {
        """
        SELECT c.relname::text, a.attname::text FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
        """
    }

    /// Stores in PostgreSQL are created by this framework (a store of Apple's is copied in),
    /// with named unique indexes.
    package var uniqueTableConstraintListingQuery: SQL? { nil }

    /// The primary key's index is named after the table, as a fresh store names it.
    package func renameTableStatements(from: String, to: String) -> [SQL] {
        [
            "ALTER TABLE \(identifier: from) RENAME TO \(identifier: to)",
            "ALTER INDEX IF EXISTS \(identifier: from + "_pkey") RENAME TO \(identifier: to + "_pkey")",
        ]
    }

    /// `IF EXISTS`: an online migration's copy of the store has its indexes built only once
    /// its steps are done, and a step renames the indexes the store has.
    package func renameIndexStatement(from: String, to: String) -> SQL? {
        "ALTER INDEX IF EXISTS \(identifier: from) RENAME TO \(identifier: to)"
    }

    /// PostgreSQL names a table's primary key index `<table>_pkey`, and a migration renames
    /// it by that name; were it longer than PostgreSQL keeps, PostgreSQL would name the
    /// index otherwise and the rename would miss it.
    package func implicitNames(ofTable table: String) -> [(name: String, role: String)] {
        [(table + "_pkey", "the primary key index")]
    }

    /// In lower case; a name longer than ``ManagedObjectModel/longestStoreName`` bytes keeps
    /// its start and ends with a hash of the whole, so that two long names stay two.
    package func modelIndexName(_ coreDataName: String) -> String {
        let name = self.name(coreDataName)
        guard name.utf8.count > ManagedObjectModel.longestStoreName else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs and machines
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        let suffix = "_" + String(repeating: "0", count: 16 - digits.count) + digits
        return name.prefix(utf8Bytes: ManagedObjectModel.longestStoreName - suffix.utf8.count) + suffix
    }

    package var keepsColumnTypesStrictly: Bool { true }

    package func storeStructure(on connection: any DatabaseConnection) throws -> StoreStructure {
        try StoreStructure.readPostgres(from: connection)
    }

    package func modelIndexColumn(_ column: String, descending: Bool) -> SQL {
        "\(identifier: column) \(raw: descending ? "DESC" : "ASC")"
    }

    /// A failed statement leaves the transaction unable to read until it is rolled back.
    package var failedStatementAbortsTransaction: Bool { true }

    /// NSPredicate's LIKE (`*`, `?`, backslash escapes) as a SQL `LIKE` pattern, whose
    /// escape character is the backslash.
    static func likePattern(fromPredicateLike like: String) -> String {
        var result = ""
        var escaping = false
        for character in like {
            if escaping {
                if character == "%" || character == "_" || character == "\\" { result += "\\" }
                result.append(character)
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": result += "%"
            case "?": result += "_"
            case "%", "_": result += "\\" + String(character)
            default: result.append(character)
            }
        }
        return result
    }
}
