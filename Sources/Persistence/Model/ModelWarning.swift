/// Something in a model that Core Data loads, and so does this framework, but that is
/// probably not what its author meant: where Xcode's model compiler warns, and where the file
/// says something Core Data reads otherwise than it looks (`YES` as an integer's default).
///
/// It names where it is as ``ModelError`` does: the file and line, the entity and property.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: url)
/// for warning in model.warnings { print("warning: \(warning)") }
/// ```
public struct ModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// What is odd and what to do about it, in a sentence.
    public var message: String
    /// The model file the warning is about, when it was read from one.
    public var file: String?
    /// The line in ``ModelWarning/file``, when known.
    public var line: Int?
    /// The entity the warning is about, when it is about one.
    public var entity: String?
    /// The attribute or relationship the warning is about, when it is about one.
    public var property: String?

    /// A warning with its message and where it is.
    public init(_ message: String, file: String? = nil, line: Int? = nil, entity: String? = nil, property: String? = nil) {
        self.message = message
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
    }

    /// `file:line, entity 'E', property 'p': message`, as ``ModelError`` says it.
    public var description: String {
        ModelError.located(message, file: file, line: line, entity: entity, property: property)
    }
}
