import Foundation

/// The seed catalogue in `Seeds/catalogue.json`: the Core Data book's four books.
public struct Catalogue: Sendable, Codable, Hashable {
    public struct Book: Sendable, Codable, Hashable {
        public var title: String
        public var price: Double
        public var pages: [Page]
        /// From version 3 on the book assigns each title an author and a new price.
        public var fromVersion3: Revision?
    }

    public struct Revision: Sendable, Codable, Hashable {
        public var author: String
        public var price: Double
    }

    public struct Page: Sendable, Codable, Hashable {
        public var number: Int
        public var text: String
    }

    public var books: [Book]

    /// Loads `catalogue.json` from `directory` (the `Seeds` folder), or finds it.
    public static func load(from directory: URL? = nil) throws -> Catalogue {
        let seeds = try directory ?? ResourceLocator.directory(named: "Seeds", containing: "catalogue.json")
        let file = seeds.appendingPathComponent("catalogue.json")
        do {
            return try JSONDecoder().decode(Catalogue.self, from: Data(contentsOf: file))
        } catch {
            throw BookStoreError("cannot read the seed catalogue \(file.path): \(error)", hint: "check the file is valid JSON of the documented shape")
        }
    }
}
