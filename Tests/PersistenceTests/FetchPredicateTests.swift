import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Fetches with predicates, checked against the same question answered in Swift over
/// the seeded data, whether the data is saved, unsaved in the fetching context, or partly
/// changed there since it was saved (``Seeding``): a context's fetch answers alike.
@Suite("Fetching with predicates")
struct FetchPredicateTests {
    struct SeedBook: Sendable {
        let title: String
        let price: Double
        let isbn: String?
        let authors: [Int]
        let pages: Int
    }

    static let authorNames = ["Ann", "Bob", "Émile Zola", "Cleo"]

    static let books: [SeedBook] = [
        SeedBook(title: "The first book", price: 10, isbn: "978-0001", authors: [0], pages: 3),
        SeedBook(title: "the Second Book", price: 15, isbn: nil, authors: [1], pages: 2),
        SeedBook(title: "THE THIRD BOOK", price: 10, isbn: "978-0003", authors: [0, 1], pages: 0),
        SeedBook(title: "The fourth book", price: 12, isbn: "979-0004", authors: [2], pages: 5),
        SeedBook(title: "Émile", price: 20, isbn: nil, authors: [2], pages: 1),
        SeedBook(title: "émile", price: 21, isbn: "978-0006", authors: [], pages: 0),
        SeedBook(title: "Emile", price: 22.5, isbn: "X", authors: [3], pages: 4),
        SeedBook(title: "Über alles", price: 8, isbn: nil, authors: [], pages: 2),
        SeedBook(title: "uber Alles", price: 9.5, isbn: "978-0009", authors: [0], pages: 1),
        SeedBook(title: "Café society", price: 30, isbn: "979-0010", authors: [1, 2, 3], pages: 6),
        SeedBook(title: "cafe Society", price: 31, isbn: nil, authors: [], pages: 3),
        SeedBook(title: "naïve art", price: 5, isbn: "978-0012", authors: [3], pages: 2),
        SeedBook(title: "Naive Art", price: 5.5, isbn: "X", authors: [0], pages: 0),
        SeedBook(title: "Résumé writing", price: 40, isbn: nil, authors: [1], pages: 1),
        SeedBook(title: "resume writing", price: 41, isbn: "978-0015", authors: [], pages: 2),
        SeedBook(title: "100% pure", price: 7, isbn: "978-0016", authors: [], pages: 0),
        SeedBook(title: "under_score", price: 6.25, isbn: nil, authors: [2], pages: 3),
        SeedBook(title: "star*light", price: 100, isbn: "979-0018", authors: [], pages: 1),
        SeedBook(title: "what? why?", price: 99, isbn: "X", authors: [], pages: 0),
        SeedBook(title: "[bracket] book", price: 12, isbn: nil, authors: [0], pages: 2),
        SeedBook(title: "back\\slash", price: 13, isbn: "978-0021", authors: [], pages: 1),
        SeedBook(title: "it's quoted", price: 14, isbn: nil, authors: [1], pages: 0),
        SeedBook(title: "say \"hi\"", price: 15, isbn: "978-0023", authors: [], pages: 2),
        SeedBook(title: "日本語の本", price: 16.5, isbn: "979-0024", authors: [3], pages: 3),
        SeedBook(title: "Ελληνικά", price: 17, isbn: nil, authors: [], pages: 1),
        SeedBook(title: "ελληνικα", price: 18, isbn: "978-0026", authors: [], pages: 0),
        SeedBook(title: "Zebra", price: 1000, isbn: nil, authors: [0, 1, 2, 3], pages: 4),
        SeedBook(title: "apple pie", price: 0, isbn: "978-0028", authors: [], pages: 0),
        SeedBook(title: "A tale of two cities", price: 25, isbn: "979-0029", authors: [1], pages: 5),
        SeedBook(title: "a Tale", price: 25, isbn: nil, authors: [], pages: 1),
    ]

    /// A page as seeded: its book (nil for the orphans) and number; its text names both.
    struct SeedPage: Sendable {
        let book: Int?
        let number: Int
        var text: String { "\(book.map { Self.titleOf($0) } ?? "orphan")#\(number)" }
        static func titleOf(_ index: Int) -> String { FetchPredicateTests.books[index].title }
    }

    /// Pages in insertion (and so primary-key) order.
    static let pages: [SeedPage] = {
        var result = [SeedPage(book: nil, number: 1), SeedPage(book: nil, number: 2)]
        for (index, book) in books.enumerated() {
            for number in stride(from: book.pages, through: 1, by: -1) {
                result.append(SeedPage(book: index, number: number))
            }
        }
        return result
    }()

    /// Where the seed data is when a test fetches it: every fetch must give the same answer.
    enum Seeding: String, CaseIterable, CustomTestStringConvertible {
        /// Saved in the store; the store answers.
        case saved
        /// Inserted in the fetching context and never saved: the context answers alone.
        case unsaved
        /// Every other book (and its pages and authors) saved with other values and other
        /// relationships, and set right in the fetching context without a save: the store
        /// answers for the rows the context did not change, the context for the others.
        case changed

        var testDescription: String { rawValue }
    }

    /// Writes the seed data as `seeding` says, books in order (so `Z_PK` follows the array),
    /// and returns the context to fetch it with.
    static func seed(_ container: PersistentContainer, _ seeding: Seeding = .saved) async throws -> ManagedObjectContext {
        let context = container.newContext()
        // A changed book is saved with other values, no authors and none of its pages.
        func isChanged(_ index: Int) -> Bool { seeding == .changed && index % 2 == 0 }
        var authors: [ManagedObject] = []
        for name in authorNames {
            let author = try context.insertObject(entityName: "Author")
            author.setValue(.string(name), forKey: "name")
            authors.append(author)
        }
        var bookObjects: [ManagedObject] = []
        for (index, book) in books.enumerated() {
            let object = try context.insertObject(entityName: "Book")
            if isChanged(index) {
                object.setValue(.string("zz \(index)"), forKey: "title")
                object.setValue(.double(999 - book.price / 2), forKey: "price")
                object.setValue(book.isbn == nil ? "978-9999" : .null, forKey: "isbn")
            } else {
                set(book, on: object, authors: authors)
            }
            bookObjects.append(object)
        }
        for page in pages {
            let object = try context.insertObject(entityName: "Page")
            if let book = page.book, isChanged(book) {
                object.setValue(.integer(Int64(page.number + 100)), forKey: "number")
                object.setValue("zz", forKey: "text")
            } else {
                set(page, on: object, books: bookObjects)
            }
        }
        switch seeding {
        case .unsaved:
            return context
        case .saved:
            try await context.save()
            return container.newContext()
        case .changed:
            try await context.save()
            let changing = container.newContext()
            let all: (String) async throws -> [ManagedObject] = { try await changing.fetch(FetchRequest(entityName: $0)) }
            let (savedAuthors, savedBooks) = (try await all("Author"), try await all("Book"))
            for (index, book) in books.enumerated() where isChanged(index) {
                set(book, on: savedBooks[index], authors: savedAuthors)
            }
            for (page, object) in zip(pages, try await all("Page")) {
                if let book = page.book, isChanged(book) { set(page, on: object, books: savedBooks) }
            }
            #expect(changing.hasChanges)
            return changing
        }
    }

    private static func set(_ book: SeedBook, on object: ManagedObject, authors: [ManagedObject]) {
        object.setValue(.string(book.title), forKey: "title")
        object.setValue(.double(book.price), forKey: "price")
        object.setValue(book.isbn.map(AttributeValue.string) ?? .null, forKey: "isbn")
        for author in book.authors { object.addDestination(authors[author], forKey: "authors") }
    }

    private static func set(_ page: SeedPage, on object: ManagedObject, books: [ManagedObject]) {
        object.setValue(.integer(Int64(page.number)), forKey: "number")
        object.setValue(.string(page.text), forKey: "text")
        if let book = page.book { object.setDestination(books[book], forKey: "book") }
    }

    // MARK: Expectations in Swift

    static func options(_ c: Bool, _ d: Bool) -> String.CompareOptions {
        var options: String.CompareOptions = []
        if c { options.insert(.caseInsensitive) }
        if d { options.insert(.diacriticInsensitive) }
        return options
    }

    static func fold(_ text: String, _ options: String.CompareOptions) -> String {
        options.isEmpty ? text : text.folding(options: options, locale: nil)
    }

    /// NSPredicate's LIKE: `*` any run, `?` one character.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let t = Array(text)
        let p = Array(pattern)
        var row = [Bool](repeating: false, count: p.count + 1)
        row[0] = true
        for j in 0..<p.count where p[j] == "*" && row[j] { row[j + 1] = true }
        for i in 0..<t.count {
            var next = [Bool](repeating: false, count: p.count + 1)
            for j in 0..<p.count {
                switch p[j] {
                case "*": next[j + 1] = next[j] || row[j + 1]
                case "?": next[j + 1] = row[j]
                default: next[j + 1] = row[j] && p[j] == t[i]
                }
            }
            row = next
        }
        return row[p.count]
    }

    static func matches(_ text: String, _ pattern: String, caseInsensitive: Bool = false) throws -> Bool {
        var regex = try Regex(pattern)
        if caseInsensitive { regex = regex.ignoresCase() }
        return try regex.wholeMatch(in: text) != nil
    }

    // MARK: Helpers

    func bookTitles(_ context: ManagedObjectContext, _ format: String, _ arguments: [FormatArgument] = []) async throws -> [String] {
        let request = FetchRequest(entityName: "Book", predicate: try Predicate(format: format, arguments: arguments))
        return titles(try await context.fetch(request))
    }

    /// Fetches books with `format` and expects exactly the seeded books `expected` picks, in `Z_PK` order.
    func check(
        _ context: ManagedObjectContext,
        _ format: String,
        _ arguments: [FormatArgument] = [],
        sourceLocation: SourceLocation = #_sourceLocation,
        expected: (SeedBook) throws -> Bool
    ) async throws {
        let got = try await bookTitles(context, format, arguments)
        let want = try Self.books.filter(expected).map(\.title)
        #expect(got == want, "\(format) \(arguments)", sourceLocation: sourceLocation)
    }

    func checkPages(
        _ context: ManagedObjectContext,
        _ format: String,
        _ arguments: [FormatArgument] = [],
        sourceLocation: SourceLocation = #_sourceLocation,
        expected: (SeedPage) throws -> Bool
    ) async throws {
        let request = FetchRequest(entityName: "Page", predicate: try Predicate(format: format, arguments: arguments))
        let got = titles(try await context.fetch(request), key: "text")
        let want = try Self.pages.filter(expected).map(\.text)
        #expect(got == want, "\(format) \(arguments)", sourceLocation: sourceLocation)
    }

    // MARK: Tests

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func comparisonsAndLogic(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            try await check(c, "price > 20") { $0.price > 20 }
            try await check(c, "price >= 25") { $0.price >= 25 }
            try await check(c, "price <= 10") { $0.price <= 10 }
            try await check(c, "price < 6") { $0.price < 6 }
            try await check(c, "price == 25") { $0.price == 25 }
            try await check(c, "price != 10") { $0.price != 10 }
            try await check(c, "price == 22.5") { $0.price == 22.5 }
            try await check(c, "title == 'Zebra'") { $0.title == "Zebra" }
            try await check(c, "title == 'zebra'") { $0.title == "zebra" }
            try await check(c, "price < 10 OR price > 40") { $0.price < 10 || $0.price > 40 }
            try await check(c, "price >= 10 AND price <= 15 AND title BEGINSWITH 'The'") { (10...15).contains($0.price) && $0.title.hasPrefix("The") }
            try await check(c, "NOT (price < 20)") { !($0.price < 20) }
            try await check(c, "NOT price < 20 AND NOT price > 30") { !($0.price < 20) && !($0.price > 30) }
            try await check(c, "(price < 6 OR price > 99) AND NOT title CONTAINS 'star'") {
                ($0.price < 6 || $0.price > 99) && !$0.title.contains("star")
            }
            try await check(c, "price BETWEEN {10, 15}") { (10...15).contains($0.price) }
            try await check(c, "price BETWEEN %@", [.list([.double(5.5), .integer(9)])]) { (5.5...9).contains($0.price) }
            try await check(c, "price IN {10, 12, 1000}") { [10, 12, 1000].contains($0.price) }
            try await check(c, "title IN %@", [.list(["Zebra", "a Tale", "nope", "émile"])]) { ["Zebra", "a Tale", "émile"].contains($0.title) }
            try await check(c, "title IN[c] %@", [.list(["ZEBRA", "ÉMILE"])]) { ["zebra", "émile"].contains($0.title.lowercased()) }
            try await check(c, "%K > %@", ["price", 20]) { $0.price > 20 }
            try await check(c, "%K == %@", ["title", .string("it's quoted")]) { $0.title == "it's quoted" }
            try await check(c, "TRUEPREDICATE") { _ in true }
            try await check(c, "FALSEPREDICATE") { _ in false }
        }
    }

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func nilComparisons(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            try await check(c, "isbn == nil") { $0.isbn == nil }
            try await check(c, "isbn != nil") { $0.isbn != nil }
            try await check(c, "isbn = NULL") { $0.isbn == nil }
            // NSPredicate's != is true for nil: rows without an isbn are "not X".
            try await check(c, "isbn != 'X'") { $0.isbn != "X" }
            try await check(c, "isbn != %@", ["X"]) { $0.isbn != "X" }
            // A comparison with nil is false, so its negation is true.
            try await check(c, "NOT isbn == 'X'") { !($0.isbn == "X") }
            try await check(c, "NOT (isbn BEGINSWITH '978')") { !($0.isbn?.hasPrefix("978") ?? false) }
            try await check(c, "NOT (isbn IN {'X', '978-0001'})") { !["X", "978-0001"].contains($0.isbn ?? "") }
            try await check(c, "NOT (NOT isbn == 'X')") { $0.isbn == "X" }
            try await check(c, "isbn == nil OR isbn BEGINSWITH '979'") { $0.isbn == nil || $0.isbn!.hasPrefix("979") }
            // ALL fails on a destination whose value is nil.
            let request = FetchRequest(entityName: "Author", predicate: try Predicate(format: "ALL books.isbn BEGINSWITH '97'"))
            let want = Self.authorNames.indices.filter { a in
                Self.books.filter { $0.authors.contains(a) }.allSatisfy { $0.isbn?.hasPrefix("97") ?? false }
            }.map { Self.authorNames[$0] }
            #expect(titles(try await c.fetch(request), key: "name") == want)
            let pages = FetchRequest(entityName: "Book", predicate: try Predicate(format: "ALL pages.book.isbn != nil"))
            let wantPages = Self.books.filter { $0.pages == 0 || $0.isbn != nil }.map { $0.title }
            #expect(titles(try await c.fetch(pages)) == wantPages)
        }
    }

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func stringOperators(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            let flags: [(String, Bool, Bool)] = [("", false, false), ("[c]", true, false), ("[d]", false, true), ("[cd]", true, true)]
            let needles = ["the", "The", "emile", "Émile", "ü", "U", "Book", "book", "Society", "cafe", "ελληνικα", "e", "本", "'", "%"]
            for (flag, ci, di) in flags {
                let o = Self.options(ci, di)
                for needle in needles {
                    try await check(c, "title BEGINSWITH\(flag) %@", [.string(needle)]) {
                        needle.isEmpty || $0.title.range(of: needle, options: o.union(.anchored)) != nil
                    }
                    try await check(c, "title ENDSWITH\(flag) %@", [.string(needle)]) {
                        needle.isEmpty || $0.title.range(of: needle, options: o.union([.anchored, .backwards])) != nil
                    }
                    try await check(c, "title CONTAINS\(flag) %@", [.string(needle)]) {
                        needle.isEmpty || $0.title.range(of: needle, options: o) != nil
                    }
                    try await check(c, "title ==\(flag) %@", [.string(needle)]) {
                        $0.title.compare(needle, options: o) == .orderedSame
                    }
                }
                for pattern in ["the*book", "?mile", "*e", "*ALLES", "[bracket]*", "[[]bracket]*", "*\\**", "naive*", "*"] {
                    try await check(c, "title LIKE\(flag) %@", [.string(pattern)]) {
                        // `\*` in a LIKE pattern is a literal star.
                        let literal = pattern.replacingOccurrences(of: "\\*", with: "\u{1}")
                        let text = Self.fold($0.title, o).replacingOccurrences(of: "*", with: "\u{1}")
                        return Self.like(text, Self.fold(literal, o))
                    }
                }
            }
            try await check(c, "title MATCHES '.*[0-9]+.*'") { try Self.matches($0.title, ".*[0-9]+.*") }
            try await check(c, "title MATCHES 'the .*book'") { try Self.matches($0.title, "the .*book") }
            try await check(c, "title MATCHES[c] 'the .*book'") { try Self.matches($0.title, "the .*book", caseInsensitive: true) }
            try await check(c, "title MATCHES %@", ["[A-Z][a-z]+"]) { try Self.matches($0.title, "[A-Z][a-z]+") }
            try await check(c, "title MATCHES 'book'") { try Self.matches($0.title, "book") }
        }
    }

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func relationshipKeyPaths(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            func book(_ page: SeedPage) -> SeedBook? { page.book.map { Self.books[$0] } }
            // Through a to-one relationship.
            try await checkPages(c, "book.title BEGINSWITH[c] 'the'") { book($0)?.title.lowercased().hasPrefix("the") ?? false }
            try await checkPages(c, "book.price > 20 AND number <= 2") { (book($0)?.price ?? 0) > 20 && $0.number <= 2 }
            try await checkPages(c, "book == nil") { $0.book == nil }
            try await checkPages(c, "book != nil") { $0.book != nil }
            try await checkPages(c, "book.isbn == nil") { book($0)?.isbn == nil }
            try await checkPages(c, "NOT (book.price > 20)") { !((book($0)?.price ?? 0) > 20) }
            try await checkPages(c, "book.title != 'Zebra'") { book($0)?.title != "Zebra" }

            // Over to-many relationships.
            try await check(c, "ANY pages.number > 4") { $0.pages > 4 }
            try await check(c, "pages.number == 3") { $0.pages >= 3 }
            try await check(c, "ALL pages.number <= 2") { $0.pages <= 2 }
            try await check(c, "NONE pages.number == 3") { $0.pages < 3 }
            try await check(c, "NOT (ANY pages.number == 1)") { $0.pages == 0 }
            try await check(c, "ANY authors.name == 'Ann'") { $0.authors.contains(0) }
            try await check(c, "ANY authors.name BEGINSWITH[cd] 'emile'") { $0.authors.contains(2) }
            try await check(c, "NONE authors.name == 'Bob'") { !$0.authors.contains(1) }
            try await check(c, "ALL authors.name IN {'Ann', 'Bob'}") { $0.authors.allSatisfy { $0 <= 1 } }
            try await check(c, "pages.@count == 0") { $0.pages == 0 }
            try await check(c, "pages.@count >= 3") { $0.pages >= 3 }
            try await check(c, "authors.@count > 1") { $0.authors.count > 1 }
            try await check(c, "authors.@count == 1 AND pages.@count > 2") { $0.authors.count == 1 && $0.pages > 2 }
            try await check(c, "ANY pages.text CONTAINS '#5' OR price == 0") { $0.pages >= 5 || $0.price == 0 }

            // The same joins from the other side of a many-to-many.
            let request = FetchRequest(entityName: "Author", predicate: try Predicate(format: "ANY books.price >= 1000"))
            #expect(titles(try await c.fetch(request), key: "name") == Self.authorNames)
            let prolific = FetchRequest(entityName: "Author", predicate: try Predicate(format: "books.@count >= 7"))
            let want = Self.authorNames.indices.filter { a in Self.books.filter { $0.authors.contains(a) }.count >= 7 }.map { Self.authorNames[$0] }
            #expect(titles(try await c.fetch(prolific), key: "name") == want)
        }
    }

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func substitutionVariables(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            var request = FetchRequest(entityName: "Book", predicate: try Predicate(format: "price >= $LOW AND title CONTAINS[c] $WORD"))
            request.substitutionVariables = ["LOW": 12, "WORD": "book"]
            let want = Self.books.filter { $0.price >= 12 && $0.title.lowercased().contains("book") }.map(\.title)
            #expect(titles(try await c.fetch(request)) == want)
            #expect(try await c.count(for: request) == want.count)
            request.substitutionVariables = ["LOW": 0, "WORD": "'); DROP TABLE ZBOOK; --"]
            #expect(try await c.fetch(request).isEmpty)
            // An unbound variable is an error, not a match-everything.
            request.substitutionVariables = ["LOW": 0]
            await #expect(throws: ExpressionError.self) { try await c.fetch(request) }
        }
    }

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func sorting(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            let indexed = Array(Self.books.enumerated())

            var request = FetchRequest(
                entityName: "Book",
                sortDescriptors: [FetchRequest.SortDescriptor(key: "price"), FetchRequest.SortDescriptor(key: "title", ascending: false)]
            )
            var want = indexed.sorted { a, b in
                if a.element.price != b.element.price { return a.element.price < b.element.price }
                if a.element.title != b.element.title { return a.element.title > b.element.title }
                return a.offset < b.offset
            }.map(\.element.title)
            #expect(titles(try await c.fetch(request)) == want)

            request.sortDescriptors = [FetchRequest.SortDescriptor(key: "price", ascending: false)]
            want = indexed.sorted { a, b in
                a.element.price != b.element.price ? a.element.price > b.element.price : a.offset < b.offset
            }.map(\.element.title)
            #expect(titles(try await c.fetch(request)) == want)

            request.sortDescriptors = [FetchRequest.SortDescriptor(key: "title")]
            #expect(titles(try await c.fetch(request)) == Self.books.map(\.title).sorted())

            request.sortDescriptors = [FetchRequest.SortDescriptor(key: "title", caseInsensitive: true)]
            want = indexed.sorted { a, b in
                let l = a.element.title.lowercased()
                let r = b.element.title.lowercased()
                return l != r ? l < r : a.offset < b.offset
            }.map(\.element.title)
            #expect(titles(try await c.fetch(request)) == want)

            // nil sorts first.
            request.sortDescriptors = [FetchRequest.SortDescriptor(key: "isbn"), FetchRequest.SortDescriptor(key: "price")]
            want = indexed.sorted { a, b in
                let l = a.element.isbn ?? ""
                let r = b.element.isbn ?? ""
                if l != r { return l < r }
                return a.element.price != b.element.price ? a.element.price < b.element.price : a.offset < b.offset
            }.map(\.element.title)
            #expect(titles(try await c.fetch(request)) == want)

            // Through a to-one relationship; orphan pages have no book and come first.
            let pageRequest = FetchRequest(
                entityName: "Page",
                sortDescriptors: [
                    FetchRequest.SortDescriptor(key: "book.title", ascending: true), FetchRequest.SortDescriptor(key: "number", ascending: false),
                ]
            )
            let wantPages = Array(Self.pages.enumerated()).sorted { a, b in
                let l = a.element.book.map { Self.books[$0].title } ?? ""
                let r = b.element.book.map { Self.books[$0].title } ?? ""
                if l != r { return l < r }
                return a.element.number != b.element.number ? a.element.number > b.element.number : a.offset < b.offset
            }.map(\.element.text)
            #expect(titles(try await c.fetch(pageRequest), key: "text") == wantPages)

            // With a predicate too.
            let filtered = FetchRequest(
                entityName: "Page",
                predicate: try Predicate(format: "book.price > 20"),
                sortDescriptors: [FetchRequest.SortDescriptor(key: "book.price", ascending: false), FetchRequest.SortDescriptor(key: "number")]
            )
            let wantFiltered = Self.pages.filter { ($0.book.map { Self.books[$0].price } ?? 0) > 20 }.sorted { a, b in
                let l = Self.books[a.book!].price
                let r = Self.books[b.book!].price
                if l != r { return l > r }
                if a.number != b.number { return a.number < b.number }
                return a.book! < b.book!
            }.map(\.text)
            #expect(titles(try await c.fetch(filtered), key: "text") == wantFiltered)
        }
    }

    @Test(arguments: TestBackend.allCases, Seeding.allCases)
    func limitOffsetAndCount(backend: TestBackend, seeding: Seeding) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let c = try await Self.seed(container, seeding)
            let sort = [FetchRequest.SortDescriptor(key: "price"), FetchRequest.SortDescriptor(key: "title")]
            let all = titles(try await c.fetch(FetchRequest(entityName: "Book", sortDescriptors: sort)))
            #expect(all.count == Self.books.count)
            var pages: [String] = []
            var offset = 0
            while true {
                let page = titles(try await c.fetch(FetchRequest(entityName: "Book", sortDescriptors: sort, fetchLimit: 7, fetchOffset: offset)))
                #expect(page.count <= 7)
                if page.isEmpty { break }
                pages += page
                offset += 7
            }
            #expect(pages == all, "pages of 7 put together are the whole list, each book once")
            let middle = titles(try await c.fetch(FetchRequest(entityName: "Book", sortDescriptors: sort, fetchLimit: 5, fetchOffset: 10)))
            #expect(middle == Array(all[10..<15]))
            #expect(titles(try await c.fetch(FetchRequest(entityName: "Book", sortDescriptors: sort, fetchOffset: 27))) == Array(all[27...]))
            #expect(try await c.fetch(FetchRequest(entityName: "Book", fetchLimit: 0)).isEmpty)

            #expect(try await c.count(for: FetchRequest(entityName: "Book")) == 30)
            #expect(try await c.count(for: FetchRequest(entityName: "Book", fetchLimit: 7, fetchOffset: 28)) == 2)
            #expect(try await c.count(for: FetchRequest(entityName: "Book", fetchOffset: 40)) == 0)
            let cheap = FetchRequest(entityName: "Book", predicate: try Predicate(format: "price < 10"))
            #expect(try await c.count(for: cheap) == Self.books.filter { $0.price < 10 }.count)
            let withPages = FetchRequest(entityName: "Book", predicate: try Predicate(format: "ANY pages.number >= 2"))
            #expect(try await c.count(for: withPages) == Self.books.filter { $0.pages >= 2 }.count)
            #expect(try await c.count(for: FetchRequest(entityName: "Page")) == Self.pages.count)
        }
    }

    static let hostile = [
        "'); DROP TABLE ZBOOK; --", "Robert'); DROP TABLE ZBOOK;--", "' OR '1'='1", "O'Brien", "\"double\"",
        "100%", "%", "_", "a_b", "*", "?", "[", "]", "[abc]", "a*b", "back\\slash", "\\", "\\%", "%@", "$VAR",
        "tab\there", "new\nline", "日本語", "👩🏽‍💻", "ĂÂÎȘȚ", "; SELECT 1;",
    ]

    @Test(arguments: TestBackend.allCases)
    func hostileArgumentsMatchLiterally(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let all = Self.hostile + ["abc", "plain", "ab", "xyz%", "a%b"]
            for title in all {
                try context.insertObject(entityName: "Book").setValue(.string(title), forKey: "title")
            }
            try await context.save()
            let before = try await container.dump()
            let c = container.newContext()
            for needle in Self.hostile {
                let equal = try await bookTitles(c, "title == %@", [.string(needle)])
                #expect(equal == [needle], "== \(needle)")
                #expect(
                    try await bookTitles(c, "title BEGINSWITH %@", [.string(needle)]) == all.filter { $0.hasPrefix(needle) },
                    "BEGINSWITH \(needle)"
                )
                #expect(try await bookTitles(c, "title ENDSWITH %@", [.string(needle)]) == all.filter { $0.hasSuffix(needle) }, "ENDSWITH \(needle)")
                #expect(try await bookTitles(c, "title CONTAINS %@", [.string(needle)]) == all.filter { $0.contains(needle) }, "CONTAINS \(needle)")
                #expect(
                    try await bookTitles(c, "title CONTAINS[c] %@", [.string(needle)])
                        == all.filter { $0.range(of: needle, options: .caseInsensitive) != nil },
                    "CONTAINS[c] \(needle)"
                )
                #expect(try await bookTitles(c, "title IN %@", [.list([.string(needle), "nothing"])]) == [needle], "IN \(needle)")
                #expect(try await bookTitles(c, "%K == %@", ["title", .string(needle)]) == [needle])
            }
            // Hostile text as a key is refused, never spliced into SQL.
            await #expect(throws: (any Error).self) {
                try await c.fetch(FetchRequest(entityName: "Book", predicate: try Predicate(format: "%K == 1", "title; DROP TABLE ZBOOK")))
            }
            #expect(try await container.dump() == before, "the store is unchanged")
            #expect(try await container.count("ZBOOK") == Int64(all.count))
        }
    }
}
