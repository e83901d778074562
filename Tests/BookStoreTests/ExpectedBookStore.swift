import Foundation
import Testing

@testable import Persistence

/// What a BookStore store holds at a version, computed by this test code from the rows of
/// a store at an earlier version, following the design's five versions rather than the
/// framework's migrations, so that a migration is checked against something it did not make:
///
/// - 2: `Book` gains `author`, empty (NULL) when coming from version 1;
/// - 3: `Book` becomes `Publication` and `Page.book` `publication`; entities are numbered by
///   name (`Z_ENT`: Book 1, Page 2, then Page 1, Publication 2);
/// - 4: `author` splits at its first space into `firstName` and `lastName` (no space: all of
///   it is the first name; no author: neither);
/// - 5: `synopsis` is the title.
///
/// Rows keep their keys (`Z_PK`) and relationships; `Z_PRIMARYKEY` keeps each entity's
/// highest key. Prices are compared as the attribute's type, Float. `Z_OPT`, the optimistic
/// locking counter, is not part of what a migration must keep.
struct ExpectedBookStore: Equatable, CustomStringConvertible {
    /// Each table's rows as lines, sorted.
    var tables: [String: [String]]

    /// One publication (a book, before version 3) as any version holds it.
    struct Publication {
        var key: Int64
        var title: String?
        var price: Double?
        var author: String?
        var firstName: String?
        var lastName: String?
        var synopsis: String?
    }

    struct Page {
        var key: Int64
        var owner: Int64?
        var number: Int64?
        var text: String?
    }

    /// The rows of the store at `url`, read with plain SQL, as a store of `version` lays them out.
    static func read(_ url: StoreURL, version: Int) async throws -> (publications: [Publication], pages: [Page], maxima: [String: Int64]) {
        let owner = version >= 3 ? "ZPUBLICATION" : "ZBOOK"
        let nameColumns =
            switch version {
            case 1: "NULL, NULL, NULL"
            case 2, 3: "ZAUTHOR, NULL, NULL"
            default: "NULL, ZFIRSTNAME, ZLASTNAME"
            }
        let synopsis = version >= 5 ? "ZSYNOPSIS" : "NULL"
        return try await PersistentStore.inspect(url) { connection in
            let publications = try connection.rows(rawSQL: "SELECT Z_PK, ZTITLE, ZPRICE, \(nameColumns), \(synopsis) FROM \(owner)").map { row in
                Publication(
                    key: row[0].int64 ?? -1,
                    title: row[1].text,
                    price: row[2].double,
                    author: row[3].text,
                    firstName: row[4].text,
                    lastName: row[5].text,
                    synopsis: row[6].text
                )
            }
            let pages = try connection.rows(rawSQL: "SELECT Z_PK, \(owner), ZNUMBER, ZTEXT FROM ZPAGE").map { row in
                Page(key: row[0].int64 ?? -1, owner: row[1].int64, number: row[2].int64, text: row[3].text)
            }
            var maxima: [String: Int64] = [:]
            for row in try connection.rows("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY") { maxima[row[0].text ?? "?"] = row[1].int64 }
            return (publications, pages, maxima)
        }
    }

    /// What the store read at `source` holds once migrated to `target`. `entities`: the
    /// numbers its rows carry (`Z_ENT`) where they are not the design's.
    static func migrating(
        _ url: StoreURL,
        from source: Int,
        to target: Int,
        entities: (publication: Set<Int64>, page: Set<Int64>)? = nil
    ) async throws -> ExpectedBookStore {
        let (publications, pages, maxima) = try await read(url, version: source)
        let carried = publications.map { carry($0, from: source, to: target) }
        let sourceBook = source >= 3 ? "Publication" : "Book"
        var renamed = maxima
        if let max = renamed.removeValue(forKey: sourceBook) { renamed[target >= 3 ? "Publication" : "Book"] = max }
        return layout(carried, pages, maxima: renamed, version: target, entities: entities)
    }

    /// What the store at `url` holds now, laid out as a store of `version`.
    static func actual(_ url: StoreURL, version: Int) async throws -> ExpectedBookStore {
        let (publications, pages, maxima) = try await read(url, version: version)
        return layout(publications, pages, maxima: maxima, version: version, entities: try await entityNumbers(url, version: version))
    }

    /// A publication of version `source` as version `target` holds it.
    static func carry(_ publication: Publication, from source: Int, to target: Int) -> Publication {
        var carried = publication
        if source < 4 && target >= 4 {
            // The custom policy's split, written again here from the design's words.
            if let author = publication.author {
                if let space = author.firstIndex(of: " ") {
                    carried.firstName = String(author[..<space])
                    carried.lastName = String(author[author.index(after: space)...])
                } else {
                    carried.firstName = author
                }
            }
            carried.author = nil
        }
        if source < 5 && target >= 5 { carried.synopsis = publication.title }
        return carried
    }

    /// The entity numbers (`Z_ENT`) the rows of the store at `url` carry, by table.
    static func entityNumbers(_ url: StoreURL, version: Int) async throws -> (publication: Set<Int64>, page: Set<Int64>) {
        let owner = version >= 3 ? "ZPUBLICATION" : "ZBOOK"
        return try await PersistentStore.inspect(url) { connection in
            (
                Set(try connection.rows(rawSQL: "SELECT DISTINCT Z_ENT FROM \(owner)").compactMap { $0[0].int64 }),
                Set(try connection.rows("SELECT DISTINCT Z_ENT FROM ZPAGE").compactMap { $0[0].int64 })
            )
        }
    }

    /// The lines of each table. `entities`: the numbers found in the store; the design's
    /// numbering when `nil`.
    static func layout(
        _ publications: [Publication],
        _ pages: [Page],
        maxima: [String: Int64],
        version: Int,
        entities: (publication: Set<Int64>, page: Set<Int64>)? = nil
    ) -> ExpectedBookStore {
        func text(_ value: String?) -> String { value.map { "'\($0)'" } ?? "NULL" }
        let price: (Double?) -> String = { $0.map { "\(Float($0))" } ?? "NULL" }
        let owner = version >= 3 ? "ZPUBLICATION" : "ZBOOK"
        let numbers = entities ?? (version >= 3 ? ([2], [1]) : ([1], [2]))
        let publicationLines = publications.map { publication -> String in
            var line = "\(publication.key) \(text(publication.title)) \(price(publication.price))"
            switch version {
            case 1: break
            case 2, 3: line += " author \(text(publication.author))"
            default: line += " names \(text(publication.firstName)) \(text(publication.lastName))"
            }
            if version >= 5 { line += " synopsis \(text(publication.synopsis))" }
            return line
        }
        let pageLines = pages.map { "\($0.key) of \($0.owner.map(String.init) ?? "NULL") \($0.number.map(String.init) ?? "NULL") \(text($0.text))" }
        return ExpectedBookStore(tables: [
            owner: publicationLines.sorted(),
            "ZPAGE": pageLines.sorted(),
            "Z_ENT": ["\(owner) \(numbers.publication.sorted())", "ZPAGE \(numbers.page.sorted())"],
            "Z_PRIMARYKEY": maxima.map { "\($0.key) \($0.value)" }.sorted(),
        ])
    }

    /// How `actual` differs from this expectation: the first few differing lines per table.
    func differences(from actual: ExpectedBookStore) -> [String] {
        Set(tables.keys).union(actual.tables.keys).sorted().compactMap { table in
            let expected = tables[table] ?? []
            let found = actual.tables[table] ?? []
            guard expected != found else { return nil }
            let missing = Set(expected).subtracting(found).sorted().prefix(3)
            let extra = Set(found).subtracting(expected).sorted().prefix(3)
            return "\(table): \(expected.count) rows expected, \(found.count) found; missing \(Array(missing)), unexpected \(Array(extra))"
        }
    }

    var description: String { tables.keys.sorted().map { "\($0) (\(tables[$0]?.count ?? 0) rows)" }.joined(separator: ", ") }
}

/// Expects the store at `url` to hold, at `version`, exactly `expected`.
func expectStore(
    _ url: StoreURL,
    atVersion version: Int,
    holds expected: ExpectedBookStore,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let actual = try await ExpectedBookStore.actual(url, version: version)
    let differences = expected.differences(from: actual)
    #expect(
        differences.isEmpty,
        "the store at version \(version) differs from what the design gives: \(differences.joined(separator: "; "))",
        sourceLocation: sourceLocation
    )
}
