import Foundation

/// SQLite's spelling of the framework's SQL: Core Data's own, as an Apple store has it.
///
/// Names in capitals (`ZBOOK`), `?` placeholders, Core Data's column types, values stored as
/// Core Data stores them (dates as seconds since 2001-01-01, booleans as 0/1, UUIDs as
/// 16-byte blobs, decimals as their exact text), and string operators through the
/// functions `SQLiteFunctions` registers on every connection.
///
/// ```swift
/// SQLiteDialect().databaseValue(.bool(true), type: .boolean)  // .integer(1)
/// SQLiteDialect().columnType(for: .decimal)                   // "DECIMAL TEXT"
/// ```
package struct SQLiteDialect: SQLDialect, Hashable {
    package init() {}

    package var engineName: String { "SQLite" }

    package func name(_ coreDataName: String) -> String { coreDataName }

    /// SQLite compares names ignoring ASCII case.
    package func nameIdentity(_ name: String) -> String {
        String(decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    package var nameFoldingReason: String { ", as the store spells names in capitals" }

    package func placeholder(_ index: Int) -> String { "?" }

    /// SQLite reads names ignoring ASCII case, so a plain name of either case needs no quotes.
    package func quoteIfNeeded(_ name: String) -> String {
        isPlainName(name, letters: 0x41...0x5A, 0x61...0x7A, keywords: Self.keywords) ? name : name.quotedIdentifier
    }

    /// SQLite's keywords (sqlite.org/lang_keywords.html): a name that is one is quoted.
    static let keywords: Set<String> = [
        "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC", "ATTACH", "AUTOINCREMENT",
        "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST", "CHECK", "COLLATE", "COLUMN", "COMMIT", "CONFLICT",
        "CONSTRAINT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT",
        "DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP", "EACH", "ELSE", "END", "ESCAPE", "EXCEPT",
        "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL", "FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL",
        "GENERATED", "GLOB", "GROUP", "GROUPS", "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED", "INITIALLY",
        "INNER", "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "KEY", "LAST", "LEFT", "LIKE", "LIMIT", "MATCH",
        "MATERIALIZED", "NATURAL", "NO", "NOT", "NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER",
        "OTHERS", "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE", "RANGE", "RECURSIVE",
        "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE", "RESTRICT", "RETURNING", "RIGHT", "ROLLBACK", "ROW",
        "ROWS", "SAVEPOINT", "SELECT", "SET", "TABLE", "TEMP", "TEMPORARY", "THEN", "TIES", "TO", "TRANSACTION", "TRIGGER",
        "UNBOUNDED", "UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW", "VIRTUAL", "WHEN", "WHERE", "WINDOW",
        "WITH", "WITHOUT",
    ]

    /// `SQLITE_MAX_VARIABLE_NUMBER`, 32 766 since SQLite 3.32.
    package var parameterLimit: Int { 32_766 }

    package func columnType(for type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float: "FLOAT"
        // Text affinity keeps every digit; NUMERIC affinity would round to a double.
        case .decimal: "DECIMAL TEXT"
        case .string, .uri: "VARCHAR"
        case .date: "TIMESTAMP"
        // Only a transient is Undefined, and transients have no column.
        case .binary, .uuid, .transformable, .undefined: "BLOB"
        }
    }

    package var primaryKeyColumnType: String { "INTEGER PRIMARY KEY" }
    package var keyColumnType: String { "INTEGER" }
    package var entityColumnType: String { "INTEGER" }
    package var generatedKeyColumnType: String { "INTEGER PRIMARY KEY" }
    package var storesFloatsAndDatesRounded: Bool { false }
    package func integerSeries(through count: Int) -> String {
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < \(count)) SELECT i FROM s"
    }
    package var doubleType: String { "REAL" }
    package var integerCastRounds: Bool { false }
    package var storesDecimalsAsText: Bool { true }
    package var textHoldsNUL: Bool { true }

    /// Core Data's own stored forms (``ValueCoding/coreDataValue(_:type:)``).
    package func databaseValue(_ value: AttributeValue, type: AttributeType) -> DatabaseValue {
        ValueCoding.coreDataValue(value, type: type)
    }

    package func byteLength(_ sql: SQL) -> SQL { "length(\(sql))" }

    /// A column's declared type is only an affinity in SQLite: a value of another storage
    /// class can be there.
    package func storageMismatch(_ sql: SQL, type: AttributeType) -> SQL? {
        let storage: String =
            switch type.storageClass {
            case .integer: "integer"
            case .real: "real"
            case .text: "text"
            case .blob: "blob"
            }
        return "(\(sql) IS NOT NULL AND typeof(\(sql)) <> '\(raw: storage)')"
    }

    package func isDistinct(_ lhs: SQL, _ rhs: SQL) -> SQL { "\(lhs) IS NOT \(rhs)" }

    /// SQLite's default `BINARY` collation orders by code point already.
    package func codePointOrdered(_ sql: SQL) -> SQL { sql }

    /// NULL sorts first in SQLite already.
    package func nullOrdering(ascending: Bool) -> String { "" }

    /// A value's storage class is its type on SQLite.
    package func typedConstant(_ value: DatabaseValue, type: AttributeType) -> SQL { "\(value)" }

    package var offsetWithoutLimit: String { " LIMIT -1" }

    package func castToText(_ sql: SQL) -> SQL { sql }

    package func fold(_ sql: SQL, flags: Int32) -> SQL {
        flags == 0 ? sql : "persistence_fold(\(sql), \(literal: flags))"
    }

    /// Folded in Swift: the function would give the same.
    package func foldedConstant(_ text: String, flags: Int32) -> SQL {
        "\(StringMatching.fold(text, flags: flags))"
    }

    package func stringComparison(_ op: ComparisonOperator, _ lhs: SQL, _ needle: StringNeedle, flags: Int32) throws(ExpressionError) -> SQL {
        switch needle {
        case .constant(let text):
            let folded = StringMatching.fold(text, flags: flags)
            if op == .like {
                // GLOB reads its pattern up to a NUL.
                guard !folded.utf8.contains(0) else { throw ExpressionError(.unsupported, "a LIKE pattern cannot hold a NUL character (U+0000)") }
                return "\(lhs) GLOB \(Self.globPattern(fromLike: folded))"
            }
            // Every string begins with, ends with and contains the empty one.
            guard !folded.isEmpty else { return "\(lhs) IS NOT NULL" }
            return Self.byteComparison(op, lhs, "\(folded)")
        case .expression(let rhs):
            let comparison = Self.byteComparison(op, lhs, rhs)
            return op == .contains ? comparison : "(length(CAST(\(rhs) AS BLOB)) = 0 OR \(comparison))"
        }
    }

    package func matches(_ sql: SQL, pattern: String, caseInsensitive: Bool) -> SQL {
        "regexp(\(caseInsensitive ? "(?i)" + pattern : pattern), \(sql))"
    }

    /// SQLite runs one writer at a time, so a row read in a write transaction stays as read.
    package func lockingClause(_ lock: RowLock) -> String { "" }

    package func writeLockStatement(table: String) -> SQL? { nil }

    package func insertIgnoringDuplicates(into table: String, columns: [String], values: [DatabaseValue]) -> SQL {
        "INSERT OR IGNORE INTO \(identifier: table) (\(columns.map { "\(identifier: $0)" as SQL }.joined(separator: ", "))) VALUES (\(list: values))"
    }

    package var bookkeepingStatements: [SQL] {
        [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ]
    }

    package func tableExistsQuery(_ name: String) -> SQL {
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = \(name)"
    }

    package var tableListingQuery: SQL {
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
    }

    package var columnListingQuery: SQL {
        "SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
    }

    /// A `UNIQUE` table constraint is an index of origin `u`.
    package var uniqueTableConstraintListingQuery: SQL? {
        "SELECT DISTINCT m.name FROM sqlite_master m, pragma_index_list(m.name) i WHERE m.type = 'table' AND i.origin = 'u'"
    }

    package func renameTableStatements(from: String, to: String) -> [SQL] {
        ["ALTER TABLE \(identifier: from) RENAME TO \(identifier: to)"]
    }

    package func renameIndexStatement(from: String, to: String) -> SQL? { nil }

    package func implicitNames(ofTable table: String) -> [(name: String, role: String)] { [] }

    package func modelIndexName(_ coreDataName: String) -> String { coreDataName }

    package var keepsColumnTypesStrictly: Bool { false }

    package func storeStructure(on connection: any DatabaseConnection) throws -> StoreStructure {
        try StoreStructure.read(from: connection)
    }

    package func modelIndexColumn(_ column: String, descending: Bool) -> SQL {
        "\(identifier: column) COLLATE BINARY \(raw: descending ? "DESC" : "ASC")"
    }

    package var failedStatementAbortsTransaction: Bool { false }

    // MARK: String comparisons

    /// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` by bytes: SQLite keeps a string's every byte,
    /// NUL included, but GLOB, `length` and `substr` on text stop at a NUL, so
    /// `"a\0b" ENDSWITH "a"` would hold. Blobs and `instr` go by byte count. `right` is
    /// called for each use of the needle (a bound argument is bound once per use).
    static func byteComparison(_ op: ComparisonOperator, _ left: SQL, _ right: SQL) -> SQL {
        switch op {
        case .beginsWith: "substr(CAST(\(left) AS BLOB), 1, length(CAST(\(right) AS BLOB))) = CAST(\(right) AS BLOB)"
        case .endsWith: "substr(CAST(\(left) AS BLOB), -length(CAST(\(right) AS BLOB))) = CAST(\(right) AS BLOB)"
        default: "instr(\(left), \(right)) > 0"
        }
    }

    /// Escapes GLOB's special characters so the text matches itself.
    static func globEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "*": result += "[*]"
            case "?": result += "[?]"
            case "[": result += "[[]"
            default: result.append(character)
            }
        }
        return result
    }

    /// NSPredicate's LIKE (`*`, `?`, backslash escapes) as a GLOB pattern.
    static func globPattern(fromLike like: String) -> String {
        var result = ""
        var escaping = false
        for character in like {
            if escaping {
                result += globEscaped(String(character))
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": result += "*"
            case "?": result += "?"
            case "[": result += "[[]"
            default: result.append(character)
            }
        }
        return result
    }
}
