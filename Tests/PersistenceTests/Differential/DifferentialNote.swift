import Foundation

@testable import Persistence

/// A row of the `Note` hierarchy: a `Note`, `Comment` or `Reminder`, all in `Note`'s table,
/// with the text they share and the attribute their sub-entity adds.
struct DifferentialNote: Equatable, Sendable {
    static let entities = ["Note", "Comment", "Reminder"]

    let entityName: String
    let text: AttributeValue
    /// `Comment.author` or `Reminder.dueDay`; NULL for a plain `Note`.
    let extra: AttributeValue

    /// The sub-entity's own attribute, none for `Note`.
    static func extraName(of entityName: String) -> String? {
        switch entityName {
        case "Comment": "author"
        case "Reminder": "dueDay"
        default: nil
        }
    }

    /// A note of `entityName`, or of any of the three entities drawn in no order, so the
    /// rows of each are spread among the others' keys.
    static func draw(entityName: String? = nil, using rng: inout SeededGenerator) -> DifferentialNote {
        let entityName = entityName ?? rng.pick(entities)
        let extra: AttributeValue =
            switch entityName {
            case "Comment": .string(DifferentialValues.text(using: &rng))
            case "Reminder": .integer(DifferentialValues.integer(in: Int64.min...Int64.max, using: &rng))
            default: .null
            }
        return DifferentialNote(entityName: entityName, text: .string(DifferentialValues.text(using: &rng)), extra: extra)
    }

    init(entityName: String, text: AttributeValue, extra: AttributeValue) {
        (self.entityName, self.text, self.extra) = (entityName, text, extra)
    }

    /// The note `object` is, as a store gives it back.
    init(reading object: ManagedObject) {
        entityName = object.entity.name
        text = object.value(forKey: "text")
        extra = Self.extraName(of: entityName).map { object.value(forKey: $0) } ?? .null
    }

    func insert(into context: ManagedObjectContext) throws -> ManagedObject {
        let note = try context.insertObject(entityName: entityName)
        note.setValue(text, forKey: "text")
        if let name = Self.extraName(of: entityName) { note.setValue(extra, forKey: name) }
        return note
    }
}
