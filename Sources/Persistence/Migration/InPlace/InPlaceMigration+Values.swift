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
            /// `ownIsSource` when `ownColumn` is the table's source column. As in ``JoinTable``,
            /// `orderColumn` orders the destinations of each source row, `inverseOrderColumn`
            /// the sources of each destination row.
            case join(table: String, ownColumn: String, otherColumn: String, orderColumn: String?, inverseOrderColumn: String?, ownIsSource: Bool)
        }

        var storage: Storage
        /// The source entity declaring the own end, and the one the relationship leads to.
        var ownEntity: String
        var otherEntity: String
        /// The (source) tables holding the rows of each end.
        var ownTable: String
        var otherTable: String
        /// With a foreign key: the order column beside it (`Z_FOK_…`), the place of each row
        /// holding the key among those holding the same key — the order of the ordered
        /// to-many end.
        var keyOrderColumn: String? = nil

        /// The same pairs, seen from the other end.
        var reversed: SourceLink {
            let flippedStorage: Storage
            switch storage {
            case let .foreignKey(host, table, column):
                flippedStorage = .foreignKey(host: host.flipped, table: table, column: column)
            case let .join(table, own, other, order, inverseOrder, ownIsSource):
                flippedStorage = .join(
                    table: table,
                    ownColumn: other,
                    otherColumn: own,
                    orderColumn: order,
                    inverseOrderColumn: inverseOrder,
                    ownIsSource: !ownIsSource
                )
            }
            return SourceLink(
                storage: flippedStorage,
                ownEntity: otherEntity,
                otherEntity: ownEntity,
                ownTable: otherTable,
                otherTable: ownTable,
                keyOrderColumn: keyOrderColumn
            )
        }

        /// The table and column(s) the pairs live in: two links with the same identity share data.
        var identity: String {
            switch storage {
            case let .foreignKey(_, table, column): "\(table).\(column)"
            case let .join(table, _, _, _, _, _): table
            }
        }

        func entity(at end: End) -> String { end == .own ? ownEntity : otherEntity }
        func table(at end: End) -> String { end == .own ? ownTable : otherTable }
    }

    /// The value a destination column gets for the rows of one entity, over the row's source
    /// columns. Not a mapping's value expression: the in-place planner accepts only
    /// `$source.<attribute>` there, and plans how a column moves and converts; value
    /// expressions compile in ``SQLCompiler``.
    indirect enum ColumnValue: Hashable {
        case null
        /// A bound value (a default).
        case constant(DatabaseValue)
        /// A column of the row, by its source name.
        case column(String)
        /// A value converted to another column type (numeric type changes).
        case cast(ColumnValue, type: String)
        /// A number's integer part: PostgreSQL rounds a number it casts to an integer type,
        /// where SQLite (and Swift) drop the fraction.
        case truncated(ColumnValue)
        /// The first value that is not NULL (a default for rows without a value).
        case coalesce(ColumnValue, ColumnValue)
        /// The smallest key at the other end of a source link: a to-many becoming a to-one, or
        /// a foreign key moving to the other side.
        case firstLinked(SourceLink)
        /// The order column `column` of a join-table link, in the pair with the smallest key
        /// at the other end (the pair ``firstLinked(_:)`` keeps).
        case firstLinkedOrder(SourceLink, column: String)
        /// Filled later from the other side of a one-to-one relationship, once that side is final.
        case deferred

        /// The source column this value is that column's value as it stands, if it is.
        var plainColumn: String? {
            if case .column(let name) = self { name } else { nil }
        }
    }

}

extension InPlacePlanner.ColumnValue {
    /// The value as SQL for the row of `table`, named as it is when the statement runs
    /// (subqueries correlate with it); constants are bound.
    func sql(table: String) -> SQL {
        switch self {
        case .null, .deferred:
            return "NULL"
        case .constant(let constant):
            return constant.isNull ? "NULL" : "\(constant)"
        case .column(let name):
            return "\(identifier: name)"
        case .cast(let inner, let type):
            return "CAST(\(inner.sql(table: table)) AS \(raw: type))"
        case .truncated(let inner):
            return "trunc(\(inner.sql(table: table)))"
        case .coalesce(let first, let second):
            return "COALESCE(\(first.sql(table: table)), \(second.sql(table: table)))"
        case .firstLinked(let link):
            switch link.storage {
            case let .foreignKey(.own, _, column):
                return "\(identifier: column)"
            case let .foreignKey(.other, linkTable, column):
                return
                    "(SELECT min(l.\(storeName: "Z_PK")) FROM \(identifier: linkTable) l WHERE l.\(identifier: column) = \(identifier: table).\(storeName: "Z_PK"))"
            case let .join(linkTable, own, other, _, _, _):
                return
                    "(SELECT min(l.\(identifier: other)) FROM \(identifier: linkTable) l WHERE l.\(identifier: own) = \(identifier: table).\(storeName: "Z_PK"))"
            }
        case .firstLinkedOrder(let link, let column):
            guard case let .join(linkTable, own, other, _, _, _) = link.storage else { return "NULL" }
            return """
                (SELECT l.\(identifier: column) FROM \(identifier: linkTable) l WHERE l.\(identifier: own) = \(identifier: table).\(storeName: "Z_PK") \
                ORDER BY l.\(identifier: other) LIMIT 1)
                """
        }
    }
}
