/// The relationship shapes of a case (see ``DifferentialModel``) and which of them are
/// ordered: they turn with the case so that each kind of step meets each of them with a
/// thousand items or more. A migration path that drops an order column, or keeps a
/// relationship's members but not their order, has to meet an ordered relationship to fail.
struct DifferentialShapes: Sendable, Equatable {
    /// What `Item.about`, a to-one into the `Note` hierarchy, points at.
    enum About: String, Sendable {
        /// Instances of `Note`, `Comment` and `Reminder`.
        case anyNote = "Item.about any note"
        /// Instances of `Note` only: a mapping model that is not inferred looks a destination
        /// up by the mapping it names (`NoteToNote`), which made none of the sub-entities'
        /// instances, as Core Data's does; the hierarchy's rows are migrated all the same.
        case plainNotes = "Item.about plain notes"
        /// No `Item.about`: a set-based step does not read a relationship into a hierarchy
        /// (the run would stream); the hierarchy is migrated without it.
        case absent = "no Item.about"
    }

    var about: About
    /// Whether `Item.related` ↔ `Item.relatedBy` is in the model.
    var hasRelated: Bool
    /// `Owner.items`, the to-many side of one-to-many `Item.owner`.
    var ownerItemsOrdered: Bool
    /// `Item.tags`, one side of the many-to-many with `Tag.items`.
    var itemTagsOrdered: Bool
    /// `Tag.items`, the other side of it.
    var tagItemsOrdered: Bool
    /// `Owner.favourites`, a to-many without an inverse (kept as a hidden key on `Item`).
    var favouritesOrdered: Bool
    /// `Item.related`, one side of the reflexive many-to-many with `Item.relatedBy`.
    var relatedOrdered: Bool

    /// The shapes of the case of `kindIndex` and `rowIndex` (`rows` items). `Owner.items` and
    /// `Owner.favourites` turn with the row count, so one kind meets both of their states
    /// among 999, 1 000, 1 001 and 5 000 items; the many-to-many's four states (neither side
    /// ordered, `Item.tags`, `Tag.items`, both) turn with the kind and the row count
    /// together, so every kind meets all four among 1 to 1 001 items, three of them with
    /// 999 to 1 001.
    ///
    /// What is read back item by item, `Item.related` and an ordered `Item.tags`, stays out
    /// of the cases of 5 000 items, to keep the run short (as their widths do): `Item.related`
    /// is in the cases of 999 and 1 001 items, ordered in one of them, and the 5 000 items'
    /// `Item.tags` is never ordered. `Item.about` points at every entity of the hierarchy where the step's
    /// mapping is inferred (see ``About``).
    static func forCase(kind: DifferentialStepKind, kindIndex: Int, rowIndex: Int, rows: Int) -> DifferentialShapes {
        let manyToMany = (kindIndex + rowIndex) % 4
        let readsItemByItem = rows < 5_000
        let about: About =
            switch kind {
            case .inferredInPlace: .anyNote
            case .setBased: .absent
            case .streamedWithPolicy, .streamedWithManager: .plainNotes
            }
        return DifferentialShapes(
            about: about,
            hasRelated: rows > 1 && readsItemByItem && rowIndex % 2 == 0,
            ownerItemsOrdered: rowIndex % 2 == 1,
            itemTagsOrdered: readsItemByItem && (manyToMany == 1 || manyToMany == 3),
            tagItemsOrdered: manyToMany == 2 || manyToMany == 3,
            favouritesOrdered: (rowIndex / 2) % 2 == 1,
            relatedOrdered: ((kindIndex + rowIndex) / 2) % 2 == 0
        )
    }

    /// The ordered relationships, as a case's description names them.
    var testDescription: String {
        let ordered = [
            ownerItemsOrdered ? "Owner.items" : nil, itemTagsOrdered ? "Item.tags" : nil, tagItemsOrdered ? "Tag.items" : nil,
            favouritesOrdered ? "Owner.favourites" : nil, hasRelated && relatedOrdered ? "Item.related" : nil,
        ].compactMap { $0 }
        let shapes = [about.rawValue, hasRelated ? "Item.related" : "no Item.related"].joined(separator: ", ")
        return shapes + ", " + (ordered.isEmpty ? "nothing ordered" : "ordered \(ordered.joined(separator: ", "))")
    }
}
