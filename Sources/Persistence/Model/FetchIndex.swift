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
        /// The name of the indexed property.
        public var property: String
        /// `Binary` (a B-tree) or `RTree`, as Xcode writes it.
        public var type: String
        /// Whether the property is indexed in ascending order (the default).
        public var isAscending: Bool

        /// One property of an index, a B-tree in ascending order unless told otherwise.
        public init(property: String, type: String = "Binary", isAscending: Bool = true) {
            self.property = property
            self.type = type
            self.isAscending = isAscending
        }
    }

    /// The index's name in the model, as Xcode's Indexes list shows it.
    public var name: String
    /// The indexed properties, the index's first key first.
    public var elements: [Element]

    /// An index named `name` on `elements`, in order.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
