/// Where the context writes the pairs of a to-many relationship that is not the inverse of a
/// to-one: rows of a join table (a many-to-many), or the hidden key on the destination's row
/// (a to-many without an inverse, as Core Data keeps it).
enum ToManyLink: Sendable, Hashable {
    case join(JoinTable)
    case hiddenKey(HiddenKey)

    /// A to-many without an inverse: `column` on the destination's `table` holds the
    /// source's key, `orderColumn` its position among the source's destinations.
    struct HiddenKey: Sendable, Hashable {
        let table: String
        let column: String
        let orderColumn: String?
        let sourceEntity: String
        let relationship: String
    }

    /// The link of a relationship stored as `storage`, if it is one the context writes pairs of.
    init?(_ storage: RelationshipStorage?, orderColumn: String?, sourceEntity: String, relationship: String) {
        switch storage {
        case .joinTable(let join, _)?:
            self = .join(join)
        case .hiddenForeignKey(let table, let column)?:
            self = .hiddenKey(
                HiddenKey(table: table.name, column: column, orderColumn: orderColumn, sourceEntity: sourceEntity, relationship: relationship)
            )
        default:
            return nil
        }
    }

    /// The relationship whose sources the pairs' `source` is.
    var relationship: String {
        switch self {
        case .join(let join): join.relationship
        case .hiddenKey(let key): key.relationship
        }
    }

    /// The inverse, whose sources the pairs' `destination` is; none for a hidden key.
    var inverseRelationship: String? {
        switch self {
        case .join(let join): join.inverseRelationship
        case .hiddenKey: nil
        }
    }
}
