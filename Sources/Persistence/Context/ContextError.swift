/// A misuse of a context or its objects: unknown entity or key, an object of another context.
public struct ContextError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    static func detached(_ id: ObjectID) -> ContextError {
        ContextError("the object \(id) belongs to no context (it was deleted or its context is gone)")
    }

    public var description: String { message }
}
