/// How Core Data names the bookkeeping of a store's relationships — join tables, hidden
/// foreign keys, order columns, entity-type columns — and which of the possible names an
/// existing store uses.
///
/// The rules, as Apple-written stores show them (`Tests/Fixtures/CoreData`):
/// - A **many-to-many** `S.r ↔ D.i` has one join table, named after one of its two sides,
///   the owner: the side whose entity name sorts first; for an entity with itself, the
///   relationship whose name sorts last (`Z_1FAVORITES`, not `Z_1FAVORITEFOLDERS`). With
///   the owner `S.r` (entities numbered `nS`, `nD`) the table is `Z_<nS><R>`, its columns
///   `Z_<nS><I>` (the owner's key) and `Z_<nD><R>` (the destination's key; a name equal to
///   the first gets a `1`), and `Z_FOK_` + a key column's name without its `Z_` for each
///   ordered side: `Z_FOK_<nD><R>` orders the destinations of `r`, `Z_FOK_<nS><I>` the
///   sources in `i`.
/// - A **to-many with a to-one inverse** is the inverse's key on the destination's table; an
///   ordered one has `Z_FOK_<INVERSE>` beside it.
/// - A **to-many without an inverse** is a hidden key on the destination's table,
///   `Z<n><NAME>` (`n` the declaring entity's number), with `Z_FOK_<n><NAME>` when ordered.
///   The first releases of this framework kept it in a join table `Z_<n><NAME>` with the
///   columns `Z_<n>INVERSE_<NAME>` and `Z_<nD><NAME>`; their stores keep that.
/// - A **to-one whose destination has sub-entities** has `Z<n>_<NAME>` beside its key,
///   holding the destination row's `Z_ENT` (`n`: the destination's number).
///
/// For a store that exists (`existing`), the names it has are taken; for a new one (and the
/// destination of every migration step), Core Data's, so that it opens on an Apple device.
struct StoreLayoutRules {
    let model: ManagedObjectModel
    let numbers: [String: Int]
    let existing: ExistingTables?

    /// Where a to-many relationship is kept.
    enum ToManyStorage {
        /// The inverse's key on the destination's table, with this order column.
        case inverseKey(order: String?)
        /// A hidden key on the destination's table, with this order column.
        case hiddenKey(column: String, order: String?)
        case joinTable
    }

    /// The names of a join table.
    struct JoinNames {
        var table: String
        var owner: (entity: String, relationship: String)
        var destinationEntity: String
        var inverse: String?
        var sourceColumn: String
        var destinationColumn: String
        var orderColumn: String?
        var inverseOrderColumn: String?
    }

    /// The existing store's table, when there is a store and it has the table.
    private func existingColumns(of table: String) -> ExistingTables? {
        guard let existing, existing.has(table: table) else { return nil }
        return existing
    }

    private func number(_ entity: String) -> Int { numbers[entity] ?? 0 }

    private func hasSubentities(_ entityName: String) -> Bool {
        model.entity(named: entityName).map { !model.subentities(of: $0).isEmpty } ?? false
    }

    /// The entity-type column beside a to-one's key column `keyColumn` (`ZOWNER` → `Z5_OWNER`).
    func entityTypeColumn(of relationship: RelationshipDescription, keyColumn: String, inTable table: String) -> String? {
        let suffix = "_" + keyColumn.dropFirst()
        if let store = existingColumns(of: table) {
            // Any number: it is the destination's as Core Data numbered it when it made the column.
            return store.columns(of: table) { name in
                name.hasSuffix(suffix) && name.hasPrefix("Z") && name.dropFirst().dropLast(suffix.count).allSatisfy(\.isNumber)
                    && name.count > suffix.count + 1
            }.first
        }
        guard hasSubentities(relationship.destinationEntityName) else { return nil }
        return "Z\(number(relationship.destinationEntityName))\(suffix)"
    }

    /// Where the to-many `relationship` of `entity` is kept, its destination's root table
    /// being `destinationTable`.
    func toManyStorage(of relationship: RelationshipDescription, in entity: EntityDescription, destinationTable: String) -> ToManyStorage {
        if let inverse = model.inverse(of: relationship) {
            guard !inverse.isToMany else { return .joinTable }
            guard relationship.isOrdered else { return .inverseKey(order: nil) }
            let order = "Z_FOK_" + inverse.name.uppercased()
            if let store = existingColumns(of: destinationTable) {
                return .inverseKey(order: store.first(of: [order], in: destinationTable))
            }
            return .inverseKey(order: order)
        }
        let n = number(entity.name)
        let name = relationship.name.uppercased()
        let hidden = "Z\(n)\(name)"
        let order = "Z_FOK_\(n)\(name)"
        if let existing {
            if existing.has(table: "Z_\(n)\(name)") { return .joinTable }
            if existing.has(table: destinationTable) {
                return .hiddenKey(column: hidden, order: relationship.isOrdered ? existing.first(of: [order], in: destinationTable) : nil)
            }
        }
        return .hiddenKey(column: hidden, order: relationship.isOrdered ? order : nil)
    }

    /// The join table of the to-many `relationship` of `entity`, if it has one.
    func joinTable(of relationship: RelationshipDescription, in entity: EntityDescription) -> JoinNames? {
        let destination = relationship.destinationEntityName
        guard let inverse = model.inverse(of: relationship) else {
            guard let destinationEntity = model.entity(named: destination),
                case .joinTable = toManyStorage(
                    of: relationship,
                    in: entity,
                    destinationTable: "Z" + model.rootEntity(of: destinationEntity).name.uppercased()
                )
            else { return nil }
            return withoutInverse(relationship, in: entity)
        }
        guard inverse.isToMany else { return nil }
        let mine = Side(entity: entity.name, relationship: relationship, number: number(entity.name))
        let theirs = Side(entity: destination, relationship: inverse, number: number(destination))
        let coreDataOwner = Self.ownsJoinTable(mine, theirs) ? (mine, theirs) : (theirs, mine)
        let firstReleasesOwner = (mine.entity, mine.relationship.name) <= (theirs.entity, theirs.relationship.name) ? (mine, theirs) : (theirs, mine)
        let coreData = coreDataNames(owner: coreDataOwner.0, other: coreDataOwner.1)
        guard let existing else { return coreData }
        let alternatives = [coreData, firstReleasesNames(owner: firstReleasesOwner.0, other: firstReleasesOwner.1)]
        for candidate in alternatives where existing.has(table: candidate.table) {
            return resolved(candidate, alternatives: alternatives, in: existing)
        }
        return coreData
    }

    /// One side of a many-to-many.
    private struct Side {
        let entity: String
        let relationship: RelationshipDescription
        let number: Int
        var name: String { relationship.name.uppercased() }
    }

    /// Whether `mine` names the join table, as Core Data decides: the side whose entity
    /// sorts first (ignoring case, as entities are numbered); between two relationships of one entity, the one whose name sorts last.
    private static func ownsJoinTable(_ mine: Side, _ theirs: Side) -> Bool {
        mine.entity != theirs.entity ? EntityNumbering.precedes(mine.entity, theirs.entity) : mine.relationship.name >= theirs.relationship.name
    }

    private func coreDataNames(owner: Side, other: Side) -> JoinNames {
        let source = "Z_\(owner.number)\(other.name)"
        var destination = "Z_\(other.number)\(owner.name)"
        if destination == source { destination += "1" }
        return JoinNames(
            table: "Z_\(owner.number)\(owner.name)",
            owner: (owner.entity, owner.relationship.name),
            destinationEntity: other.entity,
            inverse: other.relationship.name,
            sourceColumn: source,
            destinationColumn: destination,
            orderColumn: owner.relationship.isOrdered ? "Z_FOK_" + destination.dropFirst(2) : nil,
            inverseOrderColumn: other.relationship.isOrdered ? "Z_FOK_" + source.dropFirst(2) : nil
        )
    }

    /// The names the first releases of this framework gave a many-to-many's join table.
    private func firstReleasesNames(owner: Side, other: Side) -> JoinNames {
        var source = "Z_\(owner.number)\(other.name)"
        let destination = "Z_\(other.number)\(owner.name)"
        if source == destination { source += "_1" }
        return JoinNames(
            table: "Z_\(owner.number)\(owner.name)",
            owner: (owner.entity, owner.relationship.name),
            destinationEntity: other.entity,
            inverse: other.relationship.name,
            sourceColumn: source,
            destinationColumn: destination,
            orderColumn: owner.relationship.isOrdered ? "Z_FOK_\(owner.number)\(owner.name)" : nil,
            inverseOrderColumn: nil
        )
    }

    /// A to-many without an inverse kept in a join table, as the first releases did.
    private func withoutInverse(_ relationship: RelationshipDescription, in entity: EntityDescription) -> JoinNames {
        let n = number(entity.name)
        let name = relationship.name.uppercased()
        let names = JoinNames(
            table: "Z_\(n)\(name)",
            owner: (entity.name, relationship.name),
            destinationEntity: relationship.destinationEntityName,
            inverse: nil,
            sourceColumn: "Z_\(n)INVERSE_\(name)",
            destinationColumn: "Z_\(number(relationship.destinationEntityName))\(name)",
            orderColumn: relationship.isOrdered ? "Z_FOK_\(n)\(name)" : nil,
            inverseOrderColumn: nil
        )
        guard let existing, existing.has(table: names.table) else { return names }
        return resolved(names, alternatives: [names], in: existing)
    }

    /// The alternative whose table the store has and whose two key columns it has, with
    /// the order columns of that alternative the store has; `names` when none fits (the
    /// store then lacks what the model needs, which recognition reports). Whole alternatives,
    /// not column by column: an earlier release's `Z_1MEMBERS_1, Z_1MEMBERS` and Core Data's
    /// `Z_1MEMBERS, Z_1MEMBERS1` share a name for different columns.
    private func resolved(_ names: JoinNames, alternatives: [JoinNames], in existing: ExistingTables) -> JoinNames {
        let fitting = alternatives.first { alternative in
            alternative.table.uppercased() == names.table.uppercased() && alternative.sourceColumn != alternative.destinationColumn
                && existing.has(column: alternative.sourceColumn, in: alternative.table)
                && existing.has(column: alternative.destinationColumn, in: alternative.table)
        }
        guard var result = fitting else { return names }
        // Order columns by any name the same side had: an earlier release named the owner's
        // `Z_FOK_<owner's number><REL>` where Core Data writes the destination's number.
        let sameSide = [result] + alternatives.filter { $0.table == result.table && $0.owner == result.owner }
        result.orderColumn = existing.first(of: sameSide.compactMap(\.orderColumn), in: result.table)
        result.inverseOrderColumn = existing.first(of: sameSide.compactMap(\.inverseOrderColumn), in: result.table)
        return result
    }
}
