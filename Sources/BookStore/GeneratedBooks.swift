import Persistence

/// The generated books of `bookstore seed --count N` and of the benchmark's stores, shaped
/// like users' data: prices with cents, authors with non-ASCII names (`Zoë Gödel`, `Søren
/// Erdős`), one-word authors, every seventh book without an author, and two pages each.
/// Book `number` is the same every time, whichever way it is written: object by object
/// (``Seeder``) or by SQL on the server (``insertStatements(count:schema:)``, for a million
/// books in seconds).
public enum GeneratedBooks {
    /// The first names; the empty one makes one-word authors.
    static let firstNames = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Émilie", "Søren", "Zoë", "Donald", ""]
    static let lastNames = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Gödel", "Erdős", "Łukasiewicz", "Knuth", "Backus"]

    /// The title of generated book `number`: `Generated book 7`.
    public static func title(_ number: Int) -> String { "Generated book \(number)" }

    /// From 0.00 to 999.99, with cents.
    public static func price(_ number: Int) -> Double { Double((number * 7_919) % 100_000) / 100 }

    /// `nil` for every seventh book.
    public static func author(_ number: Int) -> String? {
        guard number % 7 != 0 else { return nil }
        let first = firstNames[number % 10]
        let last = lastNames[(number / 10) % 10]
        return first.isEmpty ? last : "\(first) \(last)"
    }

    /// The two pages of generated book `number`, numbered 1 and 2.
    public static func pages(_ number: Int) -> [(number: Int, text: String)] {
        [(1, "Page 1 of generated book \(number)."), (2, "Page 2 of generated book \(number).")]
    }

    /// Statements that write books 1…`count` (keys 1…`count`, their pages 1…2 `count`) into
    /// the empty `Book` and `Page` tables of a `BookStore 2` store, and set the keys' counters.
    public static func insertStatements(count: Int, schema: StoreSchema) -> [String] {
        let d = schema.dialect
        guard let book = schema.table(for: "Book"), let page = schema.table(for: "Page"),
            let author = book.column(for: "author"), let price = book.column(for: "price"), let title = book.column(for: "title"),
            let owner = page.column(for: "book"), let number = page.column(for: "number"), let text = page.column(for: "text")
        else { preconditionFailure("BookStore 2 has Book (title, price, author) and Page (number, text, book)") }
        let series = d.integerSeries(through:)
        func choice(_ names: [String], _ index: String) -> String {
            "CASE \(index) " + names.enumerated().map { "WHEN \($0.offset) THEN '\($0.element)'" }.joined(separator: " ") + " END"
        }
        // As the seeder stores `price(_:)`: the double cents / 100, as the engine stores a Float
        // (rounded to 4 bytes on PostgreSQL, kept as it is on SQLite).
        let cents = "(i * 7919) % 100000"
        let priceValue = "CAST(CAST(\(cents) AS \(d.doubleType)) / 100 AS \(d.columnType(for: .float)))"
        let authorValue =
            "CASE WHEN i % 7 = 0 THEN NULL ELSE ltrim((\(choice(firstNames, "i % 10"))) || ' ' || (\(choice(lastNames, "(i / 10) % 10")))) END"
        let pk = d.name("Z_PK")
        let ent = d.name("Z_ENT")
        let opt = d.name("Z_OPT")
        let max = d.name("Z_MAX")
        return [
            "INSERT INTO \(book.name) (\(pk), \(ent), \(opt), \(author.name), \(price.name), \(title.name)) "
                + "SELECT i, \(book.entityNumber), 1, \(authorValue), \(priceValue), 'Generated book ' || i FROM (\(series(count))) n",
            "INSERT INTO \(page.name) (\(pk), \(ent), \(opt), \(owner.name), \(number.name), \(text.name)) "
                + "SELECT i, \(page.entityNumber), 1, (i + 1) / 2, 2 - i % 2, 'Page ' || (2 - i % 2) || ' of generated book ' || ((i + 1) / 2) || '.' FROM (\(series(2 * count))) n",
            "UPDATE \(d.name("Z_PRIMARYKEY")) SET \(max) = CASE \(ent) WHEN \(book.entityNumber) THEN \(count) WHEN \(page.entityNumber) THEN \(2 * count) ELSE \(max) END",
        ]
    }
}
