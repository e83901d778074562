extension InPlacePlanner {
    /// Where the pairs of a source relationship are stored, seen from one end ("own") to the
    /// other. Primary keys survive an in-place migration, so the pairs are valid links between
    /// the destination rows too; only where they are stored may change.
    struct SourceLink: Hashable {
        /// One end of the relationship.
        enum End: Hashable {
            case own, other

            var flipped: End { self == .own ? .other : .own }
        }

        enum Storage: Hashable {
            /// A foreign key `column` on `table`, whose rows are the `host` end and whose values
            /// are keys of the other end.
            case foreignKey(host: End, table: String, column: String)
            /// A join table: the own end's key in `ownColumn`, the other end's in `otherColumn`.
            /// `ownIsSource` when `ownColumn` is the table's source column.
            case join(table: String, ownColumn: String, otherColumn: String, orderColumn: String?, ownIsSource: Bool)
        }

        var storage: Storage
        /// The source entity declaring the own end, and the one the relationship leads to.
        var ownEntity: String
        var otherEntity: String
        /// The (source) tables holding the rows of each end.
        var ownTable: String
        var otherTable: String

        /// The same pairs, seen from the other end.
        var reversed: SourceLink {
            let flippedStorage: Storage
            switch storage {
            case let .foreignKey(host, table, column):
                flippedStorage = .foreignKey(host: host.flipped, table: table, column: column)
            case let .join(table, own, other, order, ownIsSource):
                flippedStorage = .join(table: table, ownColumn: other, otherColumn: own, orderColumn: order, ownIsSource: !ownIsSource)
            }
            return SourceLink(storage: flippedStorage, ownEntity: otherEntity, otherEntity: ownEntity, ownTable: otherTable, otherTable: ownTable)
        }

        /// The table and column(s) the pairs live in: two links with the same identity share data.
        var identity: String {
            switch storage {
            case let .foreignKey(_, table, column): "\(table).\(column)"
            case let .join(table, _, _, _, _): table
            }
        }

        func entity(at end: End) -> String { end == .own ? ownEntity : otherEntity }
        func table(at end: End) -> String { end == .own ? ownTable : otherTable }
    }

    /// The value a destination column gets for the rows of one entity, as SQL over the row's
    /// source columns.
    indirect enum ValueExpression: Hashable {
        case null
        /// A bound value (a default).
        case constant(DatabaseValue)
        /// A column of the row, by its source name.
        case column(String)
        /// A value converted to another column type (numeric type changes).
        case cast(ValueExpression, type: String)
        /// A number's integer part: PostgreSQL rounds a number it casts to an integer type,
        /// where SQLite (and Swift) drop the fraction.
        case truncated(ValueExpression)
        /// The first value that is not NULL (a default for rows without a value).
        case coalesce(ValueExpression, ValueExpression)
        /// The smallest key at the other end of a source link: a to-many becoming a to-one, or
        /// a foreign key moving to the other side.
        case firstLinked(SourceLink)
        /// Filled later from the other side of a one-to-one relationship, once that side is final.
        case deferred

        /// The source column this value is that column's value as it stands, if it is.
        var plainColumn: String? {
            if case .column(let name) = self { name } else { nil }
        }
    }

    /// Builds a statement's text and its arguments together, so placeholders stay in step with
    /// the values bound to them on every dialect.
    struct StatementBuilder {
        let dialect: any SQLDialect
        private(set) var arguments: [DatabaseValue] = []

        init(dialect: any SQLDialect) { self.dialect = dialect }

        /// The placeholder of a newly bound value; NULL is written as such.
        mutating func bind(_ value: DatabaseValue) -> String {
            if value.isNull { return "NULL" }
            arguments.append(value)
            return dialect.placeholder(arguments.count)
        }

        /// Renders a value for the row of `table`, named as it is when the statement runs
        /// (subqueries correlate with it).
        mutating func render(_ value: ValueExpression, table: String) -> String {
            let d = dialect
            switch value {
            case .null, .deferred:
                return "NULL"
            case .constant(let constant):
                return bind(constant)
            case .column(let name):
                return name
            case .cast(let inner, let type):
                return "CAST(\(render(inner, table: table)) AS \(type))"
            case .truncated(let inner):
                return "trunc(\(render(inner, table: table)))"
            case .coalesce(let first, let second):
                let a = render(first, table: table)
                return "COALESCE(\(a), \(render(second, table: table)))"
            case .firstLinked(let link):
                switch link.storage {
                case let .foreignKey(.own, _, column):
                    return column
                case let .foreignKey(.other, linkTable, column):
                    return "(SELECT min(l.\(d.name("Z_PK"))) FROM \(linkTable) l WHERE l.\(column) = \(table).\(d.name("Z_PK")))"
                case let .join(linkTable, own, other, _, _):
                    return "(SELECT min(l.\(other)) FROM \(linkTable) l WHERE l.\(own) = \(table).\(d.name("Z_PK")))"
                }
            }
        }

        func step(_ sql: String) -> InPlaceMigration.Step {
            InPlaceMigration.Step(sql: sql, arguments: arguments)
        }
    }
}
