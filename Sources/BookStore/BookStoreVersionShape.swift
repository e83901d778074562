/// How BookStore's entities and properties are named at each model version, so seeding
/// and reading code can work on any version.
public struct BookStoreVersionShape: Sendable, Hashable {
    /// How a version keeps a book's author.
    public enum AuthorStyle: Sendable, Hashable {
        /// Version 1: no author.
        case none
        /// Versions 2 and 3: one `author` string.
        case single
        /// Versions 4 and 5: `firstName` and `lastName`.
        case split
    }

    /// The version's number, 1 to 5.
    public let version: Int
    /// `Book` up to version 2, `Publication` from version 3.
    public let bookEntity: String
    /// `Page.book` up to version 2, `Page.publication` from version 3.
    public let pageToBook: String
    /// How the version keeps the author.
    public let authorStyle: AuthorStyle
    /// Whether the version has `Publication.synopsis` (version 5).
    public let hasSynopsis: Bool

    /// The shape of version `version` (1 to 5).
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

    /// Joins a first and last name back into one, as the way back from version 4 to 3
    /// does: the author ``splitName(_:)`` split them from. Names set at version 4 itself
    /// join as well as they can: a first name alone or a last name alone is the whole
    /// name, neither is none, and a first name with a space in it splits differently when
    /// the store comes forward again (`Mary Ann` `Shelley` → `Mary` `Ann Shelley`).
    public static func joinName(first: String?, last: String?) -> String? {
        switch (first, last) {
        case let (first?, last?): "\(first) \(last)"
        case let (first?, nil): first
        case let (nil, last?): last
        case (nil, nil): nil
        }
    }
}
