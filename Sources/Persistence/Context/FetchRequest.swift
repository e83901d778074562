/// What to fetch: an entity, a predicate, an order and a window, as in `NSFetchRequest`.
///
/// ```swift
/// var request = FetchRequest(entityName: "Book")
/// request.predicate = try Predicate(format: "price < %@", 12.0)
/// request.sortDescriptors = [.init(key: "title")]
/// request.fetchLimit = 20
/// let books = try await context.fetch(request)
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The name of the entity whose objects are fetched.
    public var entityName: String
    /// Which objects match (Core Data's `NSPredicate`); `nil` for all of the entity's.
    public var predicate: Predicate?
    /// The order of the results, the first descriptor deciding first; empty leaves the order to the store.
    public var sortDescriptors: [SortDescriptor]
    /// The most objects to return; `nil` for all.
    public var fetchLimit: Int?
    /// How many matching objects to skip first.
    public var fetchOffset: Int
    /// Whether instances of sub-entities match too (Core Data's default: yes).
    public var includesSubentities: Bool
    /// Values for `$VARIABLE`s in the predicate.
    public var substitutionVariables: [String: AttributeValue]
    /// Whether the context's unsaved changes count (Core Data's default: yes): its inserted
    /// objects that match are fetched, changed ones are matched on their current values,
    /// deleted ones are left out. With `false`, the store answers as it was last saved.
    public var includesPendingChanges: Bool

    /// A request for the objects of `entityName`; every other property has Core Data's default.
    public init(
        entityName: String,
        predicate: Predicate? = nil,
        sortDescriptors: [SortDescriptor] = [],
        fetchLimit: Int? = nil,
        fetchOffset: Int = 0,
        includesSubentities: Bool = true,
        substitutionVariables: [String: AttributeValue] = [:],
        includesPendingChanges: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
        self.substitutionVariables = substitutionVariables
        self.includesPendingChanges = includesPendingChanges
    }
}

extension FetchRequest {
    /// An ordering by a key path (through to-one relationships), as in `NSSortDescriptor`.
    ///
    /// Nested in ``FetchRequest``, so that a file importing both this module and Foundation
    /// (whose `SortDescriptor` is another type) names each without ambiguity:
    ///
    /// ```swift
    /// FetchRequest(entityName: "Page", sortDescriptors: [.init(key: "publication.title", ascending: false, caseInsensitive: true)])
    /// let byNumber = FetchRequest.SortDescriptor(key: "number")
    /// ```
    public struct SortDescriptor: Sendable, Hashable {
        /// The key path compared: an attribute, or one through to-one relationships (`publication.title`).
        public var key: String
        /// Whether smaller values come first (the default).
        public var ascending: Bool
        /// Compare strings ignoring case (`caseInsensitiveCompare:`).
        public var caseInsensitive: Bool

        /// An ordering by `key`, ascending and case-sensitive unless told otherwise.
        public init(key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
            self.key = key
            self.ascending = ascending
            self.caseInsensitive = caseInsensitive
        }
    }
}
