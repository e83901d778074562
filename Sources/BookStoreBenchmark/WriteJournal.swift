import Foundation
import Persistence
import Synchronization

/// What a ``PreviousReleaseWriter`` was told it wrote, the last word per object: the
/// migrated store (BookStore 4 or later) must hold each (every acknowledged write in it),
/// whenever it was written: titles, prices, author names, pages' publications and texts,
/// deletions.
///
/// ```swift
/// let missing = try await writer.journal.missing(in: url)   // [] when every write is in
/// ```
final class WriteJournal: Sendable {
    struct Publication: Sendable, Equatable {
        var title: String
        var price: Double
        /// The names BookStore 4 and later hold: as written, or split from a BookStore 2 or
        /// 3 author at its first space.
        var firstName: String?
        var lastName: String?
    }

    struct Page: Sendable, Equatable {
        /// The publication it belongs to, when a write said.
        var owner: Int64??
        /// Its text, when a write said.
        var text: String??
    }

    private struct Entries {
        /// `nil`: deleted.
        var publications: [Int64: Publication?] = [:]
        var pages: [Int64: Page?] = [:]
    }

    private let entries = Mutex(Entries())

    func wrote(publication key: Int64, _ value: Publication) {
        entries.withLock { $0.publications[key] = .some(value) }
    }

    func deleted(publication key: Int64, pages: [Int64]) {
        entries.withLock { entries in
            entries.publications[key] = .some(nil)
            for page in pages { entries.pages[page] = .some(nil) }
        }
    }

    /// A page's owner or text, or both, as a write left them.
    func wrote(page key: Int64, owner: Int64?? = .none, text: String?? = .none) {
        entries.withLock { entries in
            var page = (entries.pages[key] ?? nil) ?? Page()
            if let owner { page.owner = owner }
            if let text { page.text = text }
            entries.pages[key] = .some(page)
        }
    }

    func deleted(page key: Int64) {
        entries.withLock { $0.pages[key] = .some(nil) }
    }

    var count: Int { entries.withLock { $0.publications.count + $0.pages.count } }

    /// The journal's entries the store at `url` (a BookStore 3 or later store) does not
    /// hold as written, described; empty when it holds them all.
    func missing(in url: StoreURL) async throws -> [String] {
        let entries = entries.withLock { $0 }
        return try await PersistentStore.inspect(url) { connection in
            var missing: [String] = []
            let publications = Dictionary(
                try connection.rows("SELECT Z_PK, ZTITLE, ZPRICE, ZFIRSTNAME, ZLASTNAME FROM ZPUBLICATION").compactMap { row in
                    row[0].int64.map { ($0, (title: row[1].text, price: row[2].double, firstName: row[3].text, lastName: row[4].text)) }
                },
                uniquingKeysWith: { first, _ in first }
            )
            for (key, expected) in entries.publications {
                switch (expected, publications[key]) {
                case (nil, nil): break
                case (nil, _?): missing.append("publication \(key) was deleted but is there")
                case (let written?, nil): missing.append("publication \(key) ('\(written.title)') is missing")
                case (let written?, let found?):
                    if found.title != written.title || found.price.map(Float.init) != Float(written.price) {
                        missing.append(
                            "publication \(key) holds '\(found.title ?? "NULL")' at \(found.price ?? -1), not '\(written.title)' at \(written.price)"
                        )
                    } else if found.firstName != written.firstName || found.lastName != written.lastName {
                        missing.append(
                            "publication \(key) is by \(found.firstName ?? "NULL") \(found.lastName ?? "NULL"), not \(written.firstName ?? "NULL") \(written.lastName ?? "NULL")"
                        )
                    }
                }
            }
            let pages = Dictionary(
                try connection.rows("SELECT Z_PK, ZPUBLICATION, ZTEXT FROM ZPAGE").compactMap { row in
                    row[0].int64.map { ($0, (owner: row[1].int64, text: row[2].text)) }
                },
                uniquingKeysWith: { first, _ in first }
            )
            for (key, expected) in entries.pages {
                switch (expected, pages[key]) {
                case (nil, nil): break
                case (nil, _?): missing.append("page \(key) was deleted but is there")
                case (_?, nil): missing.append("page \(key) is missing")
                case (let written?, let found?):
                    if let owner = written.owner, owner != found.owner {
                        missing.append("page \(key) belongs to \(found.owner.map(String.init) ?? "none"), not \(owner.map(String.init) ?? "none")")
                    }
                    if let text = written.text, text != found.text {
                        missing.append("page \(key) reads \(found.text ?? "NULL"), not \(text ?? "NULL")")
                    }
                }
            }
            return missing.sorted()
        }
    }
}
