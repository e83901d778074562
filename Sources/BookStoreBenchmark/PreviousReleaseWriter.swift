import BookStore
import Foundation
import Logging
import Persistence
import Synchronization

/// A process of an earlier release writing its store through the framework at its model
/// version, as its service would: inserts publications with pages, retitles and reprices
/// them, deletes them, moves, rewrites and deletes pages, each a save of its own, chosen by
/// a seeded generator. Users' data: prices with cents, non-ASCII titles and names, NULLs.
///
/// ```swift
/// let writer = try await PreviousReleaseWriter(url: url, version: 4, seed: 7, logger: logger)
/// let outcome = try await writer.write(next: 0)   // one save, "ok" once it returned
/// ```
final class PreviousReleaseWriter: Sendable {
    /// What one write did, once its save returned.
    enum Operation: String, Sendable {
        case insertPublication = "insert-publication"
        case updatePublication = "update-publication"
        case deletePublication = "delete-publication"
        case movePage = "move-page"
        case retextPage = "retext-page"
        case deletePage = "delete-page"
    }

    let container: PersistentContainer
    var store: PersistentStore { container.store }
    let version: Int
    private let random: Mutex<SplitMix64>
    /// The highest keys seen: writes pick objects below them, and skip the ones gone.
    private let largest: Mutex<(publication: Int64, page: Int64)>
    private let logger: Logger
    /// What each acknowledged write left.
    let journal = WriteJournal()

    var publicationEntity: String { version >= 3 ? "Publication" : "Book" }
    var owner: String { version >= 3 ? "publication" : "book" }

    init(url: StoreURL, version: Int, seed: UInt64, logger: Logger) async throws {
        let models = try BookStoreModels.load()
        container = try await PersistentContainer.open(model: try models.model(version: version), store: url, logger: logger)
        self.version = version
        self.logger = logger
        random = Mutex(SplitMix64(seed: seed))
        let (publications, pages) = (version >= 3 ? "ZPUBLICATION" : "ZBOOK", "ZPAGE")
        let keys = try await container.store.database.read { connection in
            (
                try connection.scalar(rawSQL: "SELECT coalesce(max(Z_PK), 0) FROM \(publications)")?.int64 ?? 0,
                try connection.scalar(rawSQL: "SELECT coalesce(max(Z_PK), 0) FROM \(pages)")?.int64 ?? 0
            )
        }
        largest = Mutex((keys.0, keys.1))
    }

    func close() async {
        await store.close()
    }

    /// Makes write number `sequence` and saves it; returns what it did (`nil`: the object
    /// it chose was gone, nothing written).
    func write(_ sequence: Int) async throws -> Operation? {
        let context = container.newContext()
        /// Recorded once the save returned, with the keys it gave.
        var record: [() -> Void] = []
        let roll = next(100)
        let operation: Operation =
            switch roll {
            case ..<25: .insertPublication
            case ..<55: .updatePublication
            case ..<65: .deletePublication
            case ..<75: .movePage
            case ..<90: .retextPage
            default: .deletePage
            }
        switch operation {
        case .insertPublication:
            let publication = try context.insertObject(entityName: publicationEntity)
            record.append(noting(publication, details: setDetails(of: publication, sequence: sequence)))
            for number in 1...(1 + next(3)) {
                let page = try context.insertObject(entityName: "Page")
                let text = "Seite \(number) von „\(sequence)“ — œuvre"
                page.setValue(AttributeValue.integer(Int64(number)), forKey: "number")
                page.setValue(AttributeValue.string(text), forKey: "text")
                page.setDestination(publication, forKey: owner)
                record.append { [journal] in
                    if let key = page.objectID.primaryKey {
                        journal.wrote(page: key, owner: .some(publication.objectID.primaryKey), text: .some(text))
                    }
                }
            }
        case .updatePublication:
            guard let publication = try await existing(publicationEntity, below: largest.withLock { $0.publication }, in: context) else { return nil }
            record.append(noting(publication, details: setDetails(of: publication, sequence: sequence)))
        case .deletePublication:
            guard let publication = try await existing(publicationEntity, below: largest.withLock { $0.publication }, in: context) else { return nil }
            let (key, pages) = (
                publication.objectID.primaryKey, try await publication.destinations(forKey: "pages").compactMap(\.objectID.primaryKey)
            )
            context.delete(publication)
            record.append { [journal] in if let key { journal.deleted(publication: key, pages: pages) } }
        case .movePage:
            guard let page = try await existing("Page", below: largest.withLock { $0.page }, in: context),
                let publication = try await existing(publicationEntity, below: largest.withLock { $0.publication }, in: context)
            else { return nil }
            page.setDestination(publication, forKey: owner)
            record.append { [journal] in
                if let key = page.objectID.primaryKey { journal.wrote(page: key, owner: .some(publication.objectID.primaryKey)) }
            }
        case .retextPage:
            guard let page = try await existing("Page", below: largest.withLock { $0.page }, in: context) else { return nil }
            let text: String? = next(5) == 0 ? nil : "Überarbeitet \(sequence): naïve café"
            page.setValue(text.map(AttributeValue.string) ?? .null, forKey: "text")
            record.append { [journal] in if let key = page.objectID.primaryKey { journal.wrote(page: key, text: .some(text)) } }
        case .deletePage:
            guard let page = try await existing("Page", below: largest.withLock { $0.page }, in: context) else { return nil }
            context.delete(page)
            record.append { [journal] in if let key = page.objectID.primaryKey { journal.deleted(page: key) } }
        }
        let inserted = context.insertedObjects
        try await context.save()
        for note in record { note() }
        for object in inserted {
            guard let key = object.objectID.primaryKey else { continue }
            largest.withLock { keys in
                if object.entity.name == "Page" { keys.page = max(keys.page, key) } else { keys.publication = max(keys.publication, key) }
            }
        }
        return operation
    }

    /// The journal's note of `publication`'s details, once it is saved.
    private func noting(_ publication: ManagedObject, details: WriteJournal.Publication) -> () -> Void {
        { [journal] in if let key = publication.objectID.primaryKey { journal.wrote(publication: key, details) } }
    }

    /// Sets title, price and author names as the version has them (cents, non-ASCII,
    /// NULLs); returns the title and price.
    private func setDetails(of publication: ManagedObject, sequence: Int) -> WriteJournal.Publication {
        let titles = ["Ünïcode édition", "Книга", "新しい本", "Café crème", "Naïve — résumé"]
        let title = "\(titles[next(titles.count)]) \(sequence)"
        let price = Double(next(100_000)) / 100
        publication.setValue(.string(title), forKey: "title")
        publication.setValue(.double(price), forKey: "price")
        let first = next(4) == 0 ? nil : ["Zoë", "José", "Łukasz", "Anaïs"][next(4)]
        let last = next(4) == 0 ? nil : ["Brontë", "Müller-Lüdenscheidt", "O'Brien", "Nuñez"][next(4)]
        var details = WriteJournal.Publication(title: title, price: price, firstName: first, lastName: last)
        if version >= 4 {
            publication.setValue(first.map(AttributeValue.string) ?? .null, forKey: "firstName")
            publication.setValue(last.map(AttributeValue.string) ?? .null, forKey: "lastName")
        } else if version >= 2 {
            // BookStore 4 splits the author at its first space; these names hold none.
            let author = [first, last].compactMap { $0 }
            publication.setValue(author.isEmpty ? .null : .string(author.joined(separator: " ")), forKey: "author")
            (details.firstName, details.lastName) = (author.first, author.count > 1 ? author[1] : nil)
        } else {
            (details.firstName, details.lastName) = (nil, nil)
        }
        return details
    }

    /// An object of `entity` with a key at or below `largest`, chosen at random; `nil`
    /// when a few tries found only keys whose objects are gone.
    private func existing(_ entity: String, below largest: Int64, in context: ManagedObjectContext) async throws -> ManagedObject? {
        guard largest > 0 else { return nil }
        for _ in 0..<4 {
            let key = 1 + Int64(next(Int(largest)))
            let id = try context.objectID(entityName: entity, primaryKey: key)
            if let object = try? await context.existingObject(with: id) { return object }
        }
        return nil
    }

    private func next(_ bound: Int) -> Int {
        random.withLock { Int($0.next() % UInt64(max(bound, 1))) }
    }
}

/// A small seeded generator, the same sequence on every machine.
struct SplitMix64: Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
