import Persistence

/// BookStore's steps 2 → 3 → 4 → 5 written by hand as SQL, the floors the framework is
/// measured against. Each step runs in one transaction, on the store itself.
///
/// - ``Style/inPlace``: what a developer who knows the changes would write: renames,
///   `ALTER TABLE … ADD/DROP COLUMN`, one `UPDATE` per changed table.
/// - ``Style/rebuild``: new tables filled by `INSERT … SELECT`, the old ones dropped, the new
///   ones renamed and indexed: what any engine that writes every row must at least do.
///
/// ``wholeChainStatements()`` is what a person migrating BookStore 2 → 5 by hand writes: one
/// rebuild of each table that renames, splits the author and sets the synopsis at once, each
/// row written once. It is the floor of a migration that runs a chain in one pass.
struct HandWrittenMigration {
    enum Style: String, Codable, CaseIterable {
        case inPlace = "in place"
        case rebuild
    }

    let dialect: any SQLDialect
    let style: Style

    /// The statements of the step from version `from` to `from + 1` (2, 3 or 4).
    func statements(from version: Int) -> [String] {
        switch (version, style) {
        case (2, .inPlace):
            [
                "ALTER TABLE \(n("ZBOOK")) RENAME TO \(n("ZPUBLICATION"))",
                "ALTER TABLE \(n("ZPAGE")) RENAME COLUMN \(n("ZBOOK")) TO \(n("ZPUBLICATION"))",
                // Entities are numbered by name: Book 1, Page 2 become Page 1, Publication 2.
                "UPDATE \(n("ZPAGE")) SET \(n("Z_ENT")) = 1",
                "UPDATE \(n("ZPUBLICATION")) SET \(n("Z_ENT")) = 2",
            ]
        case (2, .rebuild):
            rebuild(from: "ZBOOK", to: "ZPUBLICATION", columns: publication(author: true), select: "Z_PK, 2, Z_OPT, ZAUTHOR, ZPRICE, ZTITLE")
                + rebuild(from: "ZPAGE", to: "ZPAGE", columns: page, select: "Z_PK, 1, Z_OPT, ZBOOK, ZNUMBER, ZTEXT", index: "ZPUBLICATION")
        case (3, .inPlace):
            [
                "ALTER TABLE \(n("ZPUBLICATION")) ADD COLUMN \(n("ZFIRSTNAME")) \(dialect.columnType(for: .string))",
                "ALTER TABLE \(n("ZPUBLICATION")) ADD COLUMN \(n("ZLASTNAME")) \(dialect.columnType(for: .string))",
                "UPDATE \(n("ZPUBLICATION")) SET \(n("ZFIRSTNAME")) = \(firstName), \(n("ZLASTNAME")) = \(lastName)",
                "ALTER TABLE \(n("ZPUBLICATION")) DROP COLUMN \(n("ZAUTHOR"))",
            ]
        case (3, .rebuild):
            rebuild(
                from: "ZPUBLICATION",
                to: "ZPUBLICATION",
                columns: publication(names: true),
                select: "Z_PK, Z_ENT, Z_OPT, \(firstName), \(lastName), ZPRICE, ZTITLE"
            )
                + rebuild(
                    from: "ZPAGE",
                    to: "ZPAGE",
                    columns: page,
                    select: "Z_PK, Z_ENT, Z_OPT, ZPUBLICATION, ZNUMBER, ZTEXT",
                    index: "ZPUBLICATION"
                )
        case (4, .inPlace):
            [
                "ALTER TABLE \(n("ZPUBLICATION")) ADD COLUMN \(n("ZSYNOPSIS")) \(dialect.columnType(for: .string))",
                "UPDATE \(n("ZPUBLICATION")) SET \(n("ZSYNOPSIS")) = \(n("ZTITLE"))",
            ]
        case (4, .rebuild):
            rebuild(
                from: "ZPUBLICATION",
                to: "ZPUBLICATION",
                columns: publication(names: true, synopsis: true),
                select: "Z_PK, Z_ENT, Z_OPT, ZFIRSTNAME, ZLASTNAME, ZPRICE, ZTITLE, ZTITLE"
            )
                + rebuild(
                    from: "ZPAGE",
                    to: "ZPAGE",
                    columns: page,
                    select: "Z_PK, Z_ENT, Z_OPT, ZPUBLICATION, ZNUMBER, ZTEXT",
                    index: "ZPUBLICATION"
                )
        default:
            preconditionFailure("BookStore has no step from version \(version)")
        }
    }

    /// BookStore 2 → 5 as one rebuild per table: `Book` becomes `Publication` with the
    /// author split and the synopsis set from the title; pages point at it.
    func wholeChainStatements() -> [String] {
        rebuild(
            from: "ZBOOK",
            to: "ZPUBLICATION",
            columns: publication(names: true, synopsis: true),
            select: "Z_PK, 2, Z_OPT, \(firstName), \(lastName), ZPRICE, ZTITLE, ZTITLE"
        )
            + rebuild(from: "ZPAGE", to: "ZPAGE", columns: page, select: "Z_PK, 1, Z_OPT, ZBOOK, ZNUMBER, ZTEXT", index: "ZPUBLICATION")
    }

    /// Runs `statements` in one transaction.
    func run(_ statements: [String], on database: any Database) async throws {
        try await database.write { connection in
            for statement in statements { try connection.execute(rawSQL: statement) }
        }
    }

    // MARK: SQL pieces

    private func n(_ name: String) -> String { dialect.name(name) }

    /// The author split at its first space: first name (all of it without a space), last name.
    private var space: String {
        dialect is PostgresDialect ? "strpos(\(n("ZAUTHOR")), ' ')" : "instr(\(n("ZAUTHOR")), ' ')"
    }
    private var firstName: String {
        "CASE WHEN \(space) > 0 THEN substr(\(n("ZAUTHOR")), 1, \(space) - 1) ELSE \(n("ZAUTHOR")) END"
    }
    private var lastName: String {
        "CASE WHEN \(space) > 0 THEN substr(\(n("ZAUTHOR")), \(space) + 1) END"
    }

    private var key: String { dialect is PostgresDialect ? "bigint PRIMARY KEY" : "INTEGER PRIMARY KEY" }
    private var integer: String { dialect is PostgresDialect ? "integer" : "INTEGER" }
    private var foreignKey: String { dialect is PostgresDialect ? "bigint" : "INTEGER" }

    private func publication(author: Bool = false, names: Bool = false, synopsis: Bool = false) -> [String] {
        var columns = ["Z_PK \(key)", "Z_ENT \(integer)", "Z_OPT \(integer)"]
        if author { columns.append("ZAUTHOR \(dialect.columnType(for: .string))") }
        if names { columns += ["ZFIRSTNAME \(dialect.columnType(for: .string))", "ZLASTNAME \(dialect.columnType(for: .string))"] }
        columns.append("ZPRICE \(dialect.columnType(for: .float))")
        if synopsis { columns.append("ZSYNOPSIS \(dialect.columnType(for: .string))") }
        columns.append("ZTITLE \(dialect.columnType(for: .string))")
        return columns
    }

    private var page: [String] {
        [
            "Z_PK \(key)", "Z_ENT \(integer)", "Z_OPT \(integer)", "ZPUBLICATION \(foreignKey)",
            "ZNUMBER \(dialect.columnType(for: .integer16))", "ZTEXT \(dialect.columnType(for: .string))",
        ]
    }

    /// A new table filled from the old one, which is dropped; then the new one takes the
    /// final name and gets its foreign-key index. (PostgreSQL folds the unquoted upper-case
    /// names of `columns` and `select` to its lower-case ones.)
    private func rebuild(from old: String, to new: String, columns: [String], select: String, index: String? = nil) -> [String] {
        let building = n(new + "_NEW")
        let names = columns.map { $0.split(separator: " ")[0] }.map { n(String($0)) }
        var statements = [
            "CREATE TABLE \(building) (\(columns.map { column in n(String(column.split(separator: " ")[0])) + column.drop { $0 != " " } }.joined(separator: ", ")))",
            "INSERT INTO \(building) (\(names.joined(separator: ", "))) SELECT \(select) FROM \(n(old))",
            "DROP TABLE \(n(old))",
            "ALTER TABLE \(building) RENAME TO \(n(new))",
        ]
        if let index {
            statements.append("CREATE INDEX \(n("\(new)_\(index)_INDEX")) ON \(n(new)) (\(n(index)))")
        }
        return statements
    }
}
