/// A save refused because objects break the model's rules; nothing was written.
///
/// It lists every invalid object and key, as Core Data's `NSValidationMultipleErrorsError`.
///
/// ```swift
/// do { try await context.save() } catch let error as ValidationError {
///     for issue in error.issues { print(issue.key ?? "-", issue.message) }
/// }
/// ```
public struct ValidationError: Error, Sendable, CustomStringConvertible {
    /// One rule one object breaks: the object, the key at fault, and what is wrong.
    public struct Issue: Sendable, Hashable, CustomStringConvertible {
        /// The kind of rule an issue is about, as Core Data's validation error codes.
        public enum Code: String, Sendable, Hashable {
            /// A required attribute or to-one relationship is nil: set it, or make the property optional in the model.
            case missingValue
            /// An attribute holds a value of another type than the model's, or an integer too wide for it: set a value of the attribute's type.
            case wrongType
            /// A number or date is below the attribute's minimum value.
            case valueTooSmall
            /// A number or date is above the attribute's maximum value.
            case valueTooLarge
            /// A string has fewer characters, or binary data fewer bytes, than the attribute's minimum length.
            case stringTooShort
            /// A string has more characters, or binary data more bytes, than the attribute's maximum length.
            case stringTooLong
            /// A to-many relationship holds fewer objects than its minimum count (one, for a required to-many).
            case tooFewObjects
            /// A to-many relationship holds more objects than its maximum count.
            case tooManyObjects
            /// An object was deleted while a relationship with the Deny delete rule still holds objects: delete or detach those first.
            case deleteDenied
            /// A key the entity does not have was set: an unknown attribute, or a relationship used as the other kind (to-one for to-many).
            case unknownKey
            /// A string the store's engine cannot hold: NUL (U+0000) in PostgreSQL's `text`.
            case unstorableCharacter
        }

        /// The kind of rule broken.
        public var code: Code
        /// The name of the invalid object's entity.
        public var entity: String
        /// The invalid object.
        public var objectID: ObjectID
        /// The attribute or relationship at fault; `nil` for the object as a whole.
        public var key: String?
        /// The problem in words, as `price must be at least 0, got -1`.
        public var message: String

        /// The issue in words: `Book Book/t3.price: price must be at least 0, got -1`.
        public var description: String {
            "\(entity) \(objectID)\(key.map { ".\($0)" } ?? ""): \(message)"
        }
    }

    /// Every problem found, object by object.
    public var issues: [Issue]

    /// The error in words: how many problems, then each one.
    public var description: String {
        "the save was refused, \(issues.count) problem\(issues.count == 1 ? "" : "s"): " + issues.map(\.description).joined(separator: "; ")
    }
}
