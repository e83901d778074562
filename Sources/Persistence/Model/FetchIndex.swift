/// A fetch index of an entity (Xcode's Indexes, `<fetchIndex>`), as in Core Data's
/// `NSFetchIndexDescription`: the properties a store keeps an index on, in order.
///
/// ```swift
/// let byMaker = FetchIndex(name: "byMakerAndNumberPlate", elements: [
///     FetchIndex.Element(property: "maker"), FetchIndex.Element(property: "numberPlate"),
/// ])
/// ```
public struct FetchIndex: Sendable, Hashable {
    /// One property of the index.
    public struct Element: Sendable, Hashable {
        public var property: String
        /// `Binary` (a B-tree) or `RTree`, as Xcode writes it.
        public var type: String
        public var isAscending: Bool

        public init(property: String, type: String = "Binary", isAscending: Bool = true) {
            self.property = property
            self.type = type
            self.isAscending = isAscending
        }
    }

    public var name: String
    public var elements: [Element]

    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
