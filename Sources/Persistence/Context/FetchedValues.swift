extension FetchRequest {
    /// A property that ``ManagedObjectContext/fetchValues(_:properties:)`` reads of each
    /// object, under a name: Core Data's `propertiesToFetch` with the dictionary result
    /// type, an `NSExpressionDescription` for what is not an attribute.
    ///
    /// ```swift
    /// let properties: [FetchRequest.Property] = ["title", "price", .init("pages.@count", as: "pageCount")]
    /// ```
    public struct Property: Sendable, Hashable, ExpressibleByStringLiteral {
        /// The key path read: an attribute (`title`), one through to-one relationships
        /// (`publication.title`), a to-one relationship (`publication`, read as the
        /// destination's ID), or `@count` or an aggregate of a to-many relationship
        /// (`pages.@count`, `pages.@max.number`).
        public var keyPath: String
        /// The key the value is read back by; the key path by default.
        public var name: String

        /// The property at `keyPath`, read back under `name` (the key path itself when `nil`).
        public init(_ keyPath: String, as name: String? = nil) {
            self.keyPath = keyPath
            self.name = name ?? keyPath
        }

        /// The property at a key path written as a string literal, read back under the key path.
        public init(stringLiteral keyPath: String) {
            self.init(keyPath)
        }
    }
}

/// The properties a values fetch read of one object, as the store holds them: no managed
/// object is made or registered, so a read that changes nothing costs one row.
///
/// ```swift
/// for row in try await context.fetchValues(request, properties: ["title", .init("pages.@count", as: "pageCount")]) {
///     print(row.objectID, row.value(forKey: "title"), row.value(forKey: "pageCount"))
/// }
/// ```
public struct FetchedValues: Sendable, Hashable {
    /// The object the values are of.
    public let objectID: ObjectID
    /// Each property's position in `values`, shared by every row of a fetch.
    let positions: [String: Int]
    let values: [Value]

    /// A fetched value: an attribute's, or a to-one relationship's destination.
    enum Value: Sendable, Hashable {
        case attribute(AttributeValue)
        case destination(ObjectID?)
    }

    /// The value fetched under `key`; `.null` for a key that was not fetched or that names a
    /// relationship (see ``destinationID(forKey:)``).
    public func value(forKey key: String) -> AttributeValue {
        guard let position = positions[key], case .attribute(let value) = values[position] else { return .null }
        return value
    }

    /// The destination's ID of a to-one relationship fetched under `key`; `nil` for none, or
    /// for a key that was not fetched.
    public func destinationID(forKey key: String) -> ObjectID? {
        guard let position = positions[key], case .destination(let id) = values[position] else { return nil }
        return id
    }
}
