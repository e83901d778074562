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
    public struct Issue: Sendable, Hashable, CustomStringConvertible {
        public enum Code: String, Sendable, Hashable {
            case missingValue
            case wrongType
            case valueTooSmall
            case valueTooLarge
            case stringTooShort
            case stringTooLong
            case tooFewObjects
            case tooManyObjects
            case deleteDenied
            case unknownKey
            /// A string the store's engine cannot hold: NUL (U+0000) in PostgreSQL's `text`.
            case unstorableCharacter
        }

        public var code: Code
        public var entity: String
        public var objectID: ObjectID
        public var key: String?
        public var message: String

        public var description: String {
            "\(entity) \(objectID)\(key.map { ".\($0)" } ?? ""): \(message)"
        }
    }

    public var issues: [Issue]

    public var description: String {
        "the save was refused, \(issues.count) problem\(issues.count == 1 ? "" : "s"): " + issues.map(\.description).joined(separator: "; ")
    }
}
