import Foundation

/// The seed catalogue in `Seeds/catalogue.json`: the Core Data book's four books.
public struct Catalogue: Sendable, Codable, Hashable {
    /// One book of the catalogue, with its pages.
    public struct Book: Sendable, Codable, Hashable {
        /// The title, also the synopsis that version 5 gives it.
        public var title: String
        /// The price before version 3, in the currency's units (`19.99`).
        public var price: Double
        /// The pages, in order.
        public var pages: [Page]
        /// From version 3 on the book assigns each title an author and a new price.
        public var fromVersion3: Revision?
    }

    /// What version 3 changes of a book: its author and price.
    public struct Revision: Sendable, Codable, Hashable {
        /// "First Last", split into `firstName` and `lastName` by version 4.
        public var author: String
        /// The price from version 3 on.
        public var price: Double
    }

    /// One page of a book.
    public struct Page: Sendable, Codable, Hashable {
        /// Its number in the book, from 1.
        public var number: Int
        /// Its text.
        public var text: String
    }

    /// The books, in the catalogue's order.
    public var books: [Book]

    /// Loads `catalogue.json` from `directory` (the `Seeds` folder), or finds it.
    public static func load(from directory: URL? = nil) throws -> Catalogue {
        let seeds = try directory ?? ResourceLocator.directory(named: "Seeds", containing: "catalogue.json")
        let file = seeds.appendingPathComponent("catalogue.json")
        do {
            return try JSONDecoder().decode(Catalogue.self, from: Data(contentsOf: file))
        } catch {
            throw BookStoreError(
                "cannot read the seed catalogue \(file.path): \(error)",
                hint: "check the file is valid JSON of the documented shape"
            )
        }
    }
}
