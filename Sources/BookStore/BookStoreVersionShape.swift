/// How BookStore's entities and properties are named at each model version, so seeding
/// and reading code can work on any version.
public struct BookStoreVersionShape: Sendable, Hashable {
    public enum AuthorStyle: Sendable, Hashable {
        /// Version 1: no author.
        case none
        /// Versions 2 and 3: one `author` string.
        case single
        /// Versions 4 and 5: `firstName` and `lastName`.
        case split
    }

    public let version: Int
    /// `Book` up to version 2, `Publication` from version 3.
    public let bookEntity: String
    /// `Page.book` up to version 2, `Page.publication` from version 3.
    public let pageToBook: String
    public let authorStyle: AuthorStyle
    public let hasSynopsis: Bool

    public init(version: Int) {
        self.version = version
        bookEntity = version >= 3 ? "Publication" : "Book"
        pageToBook = version >= 3 ? "publication" : "book"
        authorStyle = version >= 4 ? .split : version >= 2 ? .single : .none
        hasSynopsis = version >= 5
    }

    /// Splits a full name at the first space, as the version 4 migration policy does:
    /// no space puts all of it in the first name.
    public static func splitName(_ name: String) -> (first: String, last: String?) {
        guard let space = name.firstIndex(of: " ") else { return (name, nil) }
        return (String(name[..<space]), String(name[name.index(after: space)...]))
    }
}
