import Logging
import Persistence

/// Writes the catalogue (and generated books) into a store of any BookStore version.
///
/// ```swift
/// let summary = try await Seeder(catalogue: catalogue, logger: logger)
///     .seed(container, version: 3, generatedCount: 100)
/// ```
public struct Seeder: Sendable {
    /// What a seed wrote.
    public struct Summary: Sendable, Hashable {
        /// Books (publications) written.
        public var books: Int
        /// Pages written.
        public var pages: Int
    }

    /// The books seeded before the generated ones.
    public let catalogue: Catalogue
    let logger: Logger
    /// Books saved per transaction for generated data.
    public var batchSize = 2_000

    /// A seeder of `catalogue`, logging to `logger`.
    public init(catalogue: Catalogue, logger: Logger) {
        self.catalogue = catalogue
        self.logger = logger
    }

    /// Inserts the catalogue's books and `generatedCount` generated ones.
    public func seed(_ container: PersistentContainer, version: Int, generatedCount: Int = 0) async throws -> Summary {
        let shape = BookStoreVersionShape(version: version)
        let context = container.newContext()
        var summary = Summary(books: 0, pages: 0)
        for book in catalogue.books {
            let revision = version >= 3 ? book.fromVersion3 : nil
            try insert(
                into: context,
                shape: shape,
                title: book.title,
                price: revision?.price ?? book.price,
                author: revision?.author,
                pages: book.pages.map { ($0.number, $0.text) }
            )
            summary.books += 1
            summary.pages += book.pages.count
        }
        try await context.save()
        context.reset()

        var index = 0
        while index < generatedCount {
            let end = min(index + batchSize, generatedCount)
            for number in (index + 1)...end {
                let book = Self.generatedBook(number)
                try insert(
                    into: context,
                    shape: shape,
                    title: book.title,
                    price: book.price,
                    author: version >= 2 ? book.author : nil,
                    pages: book.pages
                )
                summary.books += 1
                summary.pages += book.pages.count
            }
            try await context.save()
            context.reset()
            logger.debug("seeded generated books", metadata: ["bookstore.books": "\(end)", "bookstore.total": "\(generatedCount)"])
            index = end
        }
        return summary
    }

    /// The `number`th generated book: the same every time (see ``GeneratedBooks``).
    public static func generatedBook(_ number: Int) -> (title: String, price: Double, author: String?, pages: [(Int, String)]) {
        (
            GeneratedBooks.title(number), GeneratedBooks.price(number), GeneratedBooks.author(number),
            GeneratedBooks.pages(number).map { ($0.number, $0.text) }
        )
    }

    private func insert(
        into context: ManagedObjectContext,
        shape: BookStoreVersionShape,
        title: String,
        price: Double,
        author: String?,
        pages: [(Int, String)]
    ) throws {
        let book = try context.insertObject(entityName: shape.bookEntity)
        book.setValue(.string(title), forKey: "title")
        book.setValue(.double(price), forKey: "price")
        if let author {
            switch shape.authorStyle {
            case .none: break
            case .single: book.setValue(.string(author), forKey: "author")
            case .split:
                let name = BookStoreVersionShape.splitName(author)
                book.setValue(.string(name.first), forKey: "firstName")
                book.setValue(name.last.map(AttributeValue.string) ?? .null, forKey: "lastName")
            }
        }
        if shape.hasSynopsis {
            // The version 5 migration fills the synopsis from the title; new stores match it.
            book.setValue(.string(title), forKey: "synopsis")
        }
        for (number, text) in pages {
            let page = try context.insertObject(entityName: "Page")
            page.setValue(.integer(Int64(number)), forKey: "number")
            page.setValue(.string(text), forKey: "text")
            page.setDestination(book, forKey: shape.pageToBook)
        }
    }
}
