/// A save refused because it would give two objects the same values of a uniqueness
/// constraint (Core Data's `NSManagedObjectConstraintMergeError` with its
/// `NSConstraintConflict`s). Nothing was saved: the store and the context are as they were.
///
/// ```swift
/// do { try await context.save() } catch let error as ConstraintConflictError {
///     print(error)
///     // the save was refused: Car's uniqueness constraint on numberPlate allows one Car
///     // with numberPlate "B-CD 123", and Car/t4 would be another beside Car/p12 in the store; …
///     let existing = error.conflicts[0].conflictingObjectID // update it instead
/// }
/// ```
public struct ConstraintConflictError: Error, Sendable, CustomStringConvertible {
    /// Two objects with the same values of one constraint.
    public struct Conflict: Sendable, Hashable, CustomStringConvertible {
        /// The entity that declares the constraint.
        public var entity: String
        /// The constraint's properties, in the model's order.
        public var properties: [String]
        /// Their values, in the same order.
        public var values: [ConstraintValue]
        /// The object of this save that would break the constraint.
        public var objectID: ObjectID
        /// The object it clashes with: in the store, or another of the same save.
        public var conflictingObjectID: ObjectID
        /// Whether ``conflictingObjectID`` is in the store already (rather than in this save).
        public var isInStore: Bool

        /// The conflict in words: the constraint, the values, and both objects.
        public var description: String {
            let pairs = zip(properties, values).map { "\($0) \($1)" }.joined(separator: ", ")
            let other = isInStore ? "\(conflictingObjectID) in the store" : "\(conflictingObjectID) of the same save"
            return "\(entity)'s uniqueness constraint on \(properties.joined(separator: ", ")) allows one \(entity) with \(pairs), "
                + "and \(objectID) would be another beside \(other)"
        }
    }

    /// A value of a constrained property: an attribute's, or the object a to-one points at.
    public enum ConstraintValue: Sendable, Hashable, CustomStringConvertible {
        /// An attribute's value.
        case attribute(AttributeValue)
        /// The object a to-one relationship points at.
        case object(ObjectID)

        /// The value as the error's text shows it: a string in quotes, cut after 60 characters.
        public var description: String {
            switch self {
            case .attribute(.string(let text)):
                let shown = text.count > 60 ? text.prefix(60) + "…" : Substring(text)
                return "\"\(shown)\""
            case .attribute(let value): return "\(value)"
            case .object(let id): return "\(id)"
            }
        }
    }

    /// The clashes found, one per object and constraint it would break.
    public var conflicts: [Conflict]
    /// The unique index that could not be built because rows already break its constraint
    /// (a migration's), or `nil` for a save refused.
    public var index: String?

    /// An error for `conflicts`; `index` names the unique index a migration could not build,
    /// `nil` (the default) for a save refused.
    public init(conflicts: [Conflict], index: String? = nil) {
        self.conflicts = conflicts
        self.index = index
    }

    /// The error in words: every conflict, then what to do about it.
    public var description: String {
        if let index {
            return "the store's rows break a uniqueness constraint, so its index \(index) cannot be built: "
                + conflicts.map(\.description).joined(separator: "; ")
                + ". A migration's policy or mapping made them alike: make each object once (a policy looks up what it made before; see the documentation's \"Porting a Core Data app\"), or map the values apart"
        }
        return "the save was refused: " + conflicts.map(\.description).joined(separator: "; ")
            + "; nothing was saved. Give the object other values, or fetch the one there is and change it instead"
    }
}
