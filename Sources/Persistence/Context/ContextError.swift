/// A misuse of a context or its objects: unknown entity or key, an object of another context.
public struct ContextError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, in words.
    public var message: String

    /// An error with the given message.
    public init(_ message: String) { self.message = message }

    static func detached(_ id: ObjectID) -> ContextError {
        ContextError("the object \(id) belongs to no context (it was deleted or its context is gone)")
    }

    /// The message.
    public var description: String { message }
}
