import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// An online migration of ``LibraryModel`` whose mapping reads related objects
/// (`Page.bookTitle` from `$source.book.title`, `Book.pageCount` from `$source.pages.@count`,
/// `Author.bookCount` from `$source.books.@count` across a many-to-many), while the
/// previous version writes in every phase: retitles, pages deleted and moved, many-to-many
/// links added and removed, sub-entities (`Tool`, `Gadget`) inserted, renamed and
/// deleted, cascades. The migrated store equals, table for table, the store's last state
/// before the cut-over (copied while the cut-over held writers off) with the three new
/// attributes computed by the test from that state's rows: the objects a relationship away
/// from a changed one were migrated again with it.
///
/// PostgreSQL only: online migrations are PostgreSQL's.
@Suite(.serialized) struct OnlineMigrationRelationshipTests: LibraryObjects {
    static func models() throws -> (v1: ManagedObjectModel, v2: ManagedObjectModel, chain: MigrationChain) {
        let v1 = try LibraryModel.make()
        var entities = v1.entities
        let added = ["Page": ("bookTitle", AttributeType.string), "Book": ("pageCount", .integer32), "Author": ("bookCount", .integer32)]
        for index in entities.indices {
            if let (name, type) = added[entities[index].name] { entities[index].attributes.append(AttributeDescription(name: name, type: type)) }
        }
        let v2 = try ManagedObjectModel(name: "Library 2", versionIdentifier: "2", entities: entities)
        var mapping = try MappingModel.inferred(from: v1, to: v2)
        let expressions = [
            "Page": ("bookTitle", "$source.book.title"), "Book": ("pageCount", "$source.pages.@count"),
            "Author": ("bookCount", "$source.books.@count"),
        ]
        for index in mapping.entityMappings.indices {
            guard let name = mapping.entityMappings[index].destinationEntityName, let (attribute, format) = expressions[name] else { continue }
            mapping.entityMappings[index].attributeMappings.removeAll { $0.name == attribute }
            mapping.entityMappings[index].attributeMappings.append(PropertyMapping(name: attribute, valueExpression: try Expression(format: format)))
        }
        mapping.isInferred = false
        let versions = try VersionedModel(name: "Library", versions: [v1, v2], currentVersionName: "Library 2")
        return (v1, v2, MigrationChain(models: versions, mappingModels: [mapping]))
    }

    @Test func objectsARelationshipAwayFromAChangeAreMigratedAgain() async throws {
        let (v1, v2, chain) = try Self.models()
        try await TestPostgres.withDatabase { url in
            try await seedLibrary(at: url, model: v1)
            let configuration = try #require((url.engine as? PostgresEngine)?.configuration)
            let store = try await PersistentStore.open(url, model: v1, logger: testLogger)
            let writer = Writer(context: ManagedObjectContext(store: store, logger: testLogger))
            let twiceMoved = Mutex<ObjectID?>(nil)
            var options = OnlineMigrationOptions()
            options.changesLeftForCutOver = 0
            // A few changes a round: each round's snapshot sees changes it did not take.
            options.changesPerRound = 3
            options.phaseObserver = { phase in
                switch phase {
                case .captureInstalled:
                    try await writer.book(1) { $0.setValue(.string("Neuer Titel, 2ᵉ édition"), forKey: "title") }
                    try await writer.link(author: 1, book: 3)
                case .copied:
                    try await writer.deletePage(of: 2)
                    try await writer.movePage(from: 3, to: 4)
                    try await writer.insert("Gadget", name: "Neues Gerät")
                    try await writer.delete("Tool", nth: 0)
                case .bulkMigrated:
                    let moved = try await writer.movePage(from: 2, to: 3)
                    twiceMoved.withLock { $0 = moved }
                    try await writer.insertBook("Nachzügler", pages: 2, author: 2)
                    try await writer.unlink(author: 0, book: 0)
                    try await writer.rename("Tool", nth: 1, to: "Zange")
                case .caughtUp(round: 1, _):
                    try await writer.book(4) { $0.setValue(.string("Umbenannt während des Aufholens"), forKey: "title") }
                    try await writer.deleteAuthor(2)
                case .caughtUp(round: 3, _):
                    // Moved on again once a round may have counted it where it was.
                    if let moved = twiceMoved.withLock({ $0 }) { try await writer.movePage(moved, to: 5) }
                case .cutOverLocking(attempt: 1):
                    try await writer.deleteBook(5)
                    try await writer.insertPage(into: 0)
                case .cutOverLocked:
                    try await Self.copyTables(of: configuration.schema, into: Self.lastState, at: url)
                default:
                    break
                }
            }
            try await ProgressiveMigrator(chain: chain, batchSize: 2, logger: testLogger).migrateStoreOnline(at: url, options: options)
            await store.close()

            let computed = try await Self.expectOnlineMatchesTheComputedState(url, model: v2)
            // The data the test means to exercise is there.
            #expect(computed["zpage"]?.contains { $0.contains("Umbenannt während des Aufholens") } == true)
            #expect(computed["zbook"]?.contains { $0.contains("Nachzügler") } == true)
            try await expectNoLeftovers(url)
        }
    }

    /// Three shelves, four authors, six books with two or three pages and one or two
    /// authors each, three tools and three gadgets.
    func seedLibrary(at url: StoreURL, model: ManagedObjectModel) async throws {
        try await makeClosedStore(at: url, model: model) { container in
            let context = container.newContext()
            let shelves = try (0..<3).map { index in
                let shelf = try context.insertObject(entityName: "Shelf")
                shelf.setValue(.string("Regal \(index)"), forKey: "label")
                return shelf
            }
            let authors = try ["Zoë", "José", "Łukasz", "Anaïs"].map { name in
                let author = try context.insertObject(entityName: "Author")
                author.setValue(.string(name), forKey: "name")
                return author
            }
            for index in 0..<6 {
                let book = try book(context, "Buch \(index) — “\(index)”")
                book.setValue(.double(Double(index) + 0.99), forKey: "price")
                book.setDestination(shelves[index % 3], forKey: "shelf")
                for number in 1...(2 + index % 2) { _ = try page(context, Int64(number), of: book) }
                book.addDestination(authors[index % 4], forKey: "authors")
                if index % 2 == 0 { book.addDestination(authors[(index + 1) % 4], forKey: "authors") }
            }
            for index in 0..<3 {
                try context.insertObject(entityName: "Tool").setValue(.string("Hammer \(index)"), forKey: "name")
                try context.insertObject(entityName: "Gadget").setValue(.string("Gerät \(index)"), forKey: "name")
            }
            try await context.save()
        }
    }

    /// A page moved into a book, counted there by a round that took another change of the
    /// book's, then moved on before its own changes were taken: the book it passed through
    /// is counted again without it (the capture recorded it as related with each move).
    @Test func aPageMovedTwiceAcrossRoundsLeavesEveryCountRight() async throws {
        let (v1, v2, chain) = try Self.models()
        try await TestPostgres.withDatabase { url in
            try await seedLibrary(at: url, model: v1)
            let configuration = try #require((url.engine as? PostgresEngine)?.configuration)
            let store = try await PersistentStore.open(url, model: v1, logger: testLogger)
            let writer = Writer(context: ManagedObjectContext(store: store, logger: testLogger))
            let moved = Mutex<ObjectID?>(nil)
            var options = OnlineMigrationOptions()
            options.changesLeftForCutOver = 0
            options.changesPerRound = 1
            options.phaseObserver = { phase in
                switch phase {
                case .bulkMigrated:
                    // Book 3's own page first, then the page that joins it: the first round
                    // takes the first change only, and counts book 3 with the newcomer in it.
                    try await writer.retextPage(of: 3)
                    let page = try await writer.movePage(from: 2, to: 3)
                    moved.withLock { $0 = page }
                case .caughtUp(round: 1, _):
                    if let page = moved.withLock({ $0 }) { try await writer.movePage(page, to: 5) }
                case .cutOverLocked:
                    try await Self.copyTables(of: configuration.schema, into: Self.lastState, at: url)
                default:
                    break
                }
            }
            try await ProgressiveMigrator(chain: chain, batchSize: 2, logger: testLogger).migrateStoreOnline(at: url, options: options)
            await store.close()
            _ = try await Self.expectOnlineMatchesTheComputedState(url, model: v2)
            try await expectNoLeftovers(url)
        }
    }

    /// The schema the store's last state before the cut-over is copied into.
    static let lastState = "last_state"

    /// Gives the copy of the last state (``lastState``) the new attributes, computed here in
    /// SQL of the test's own from the copy's rows (a page's book's title, a book's pages, an
    /// author's books: the mapping's expressions), and expects the store at `url`, migrated
    /// online, to hold the same rows in every table; returns the computed ones.
    static func expectOnlineMatchesTheComputedState(
        _ url: StoreURL,
        model: ManagedObjectModel,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: [String]] {
        let configuration = try #require((url.engine as? PostgresEngine)?.configuration)
        let schema = configuration.schema
        let join = try #require(
            StoreSchema(model: model, dialect: PostgresDialect()).allJoinTables.first { $0.relationship == "authors" || $0.relationship == "books" }
        )
        let authorColumn = (join.sourceEntity == "Author" ? join.sourceColumn : join.destinationColumn).lowercased()
        let database = try await PostgresDatabase.open(configuration, readerCount: 0)
        do {
            try await database.write { connection in
                let state = lastState.quotedIdentifier
                try connection.execute(
                    rawSQL: """
                        ALTER TABLE \(state).zpage ADD COLUMN zbooktitle text;
                        UPDATE \(state).zpage p SET zbooktitle = b.ztitle FROM \(state).zbook b WHERE b.z_pk = p.zbook;
                        ALTER TABLE \(state).zbook ADD COLUMN zpagecount integer;
                        UPDATE \(state).zbook b SET zpagecount = (SELECT count(*) FROM \(state).zpage p WHERE p.zbook = b.z_pk);
                        ALTER TABLE \(state).zauthor ADD COLUMN zbookcount integer;
                        UPDATE \(state).zauthor a SET zbookcount = (SELECT count(*) FROM \(state).\(join.name.lowercased()) j WHERE j.\(authorColumn) = a.z_pk)
                        """
                )
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
        let online = try await rows(of: schema, model: model, at: url)
        let computed = try await rows(of: lastState, model: model, at: url)
        #expect(online.keys.sorted() == computed.keys.sorted(), sourceLocation: sourceLocation)
        for table in computed.keys.sorted() {
            #expect(
                online[table] == computed[table],
                "\(table): online \(online[table] ?? []) computed \(computed[table] ?? [])",
                sourceLocation: sourceLocation
            )
        }
        return computed
    }

    /// Copies every table of `schema` into a new schema `copy` beside it, rows and all.
    static func copyTables(of schema: String, into copy: String, at url: StoreURL) async throws {
        let database = try await PostgresDatabase.open(try #require((url.engine as? PostgresEngine)?.configuration), readerCount: 0)
        do {
            try await database.write { connection in
                let (from, to) = (schema.quotedIdentifier, copy.quotedIdentifier)
                try connection.execute(rawSQL: "CREATE SCHEMA \(to)")
                for table in try connection.rows(rawSQL: "SELECT tablename FROM pg_tables WHERE schemaname = $1", [.text(schema)]).compactMap({
                    $0[0].text
                }) {
                    let name = table.quotedIdentifier
                    try connection.execute(
                        rawSQL:
                            "CREATE TABLE \(to).\(name) (LIKE \(from).\(name) INCLUDING ALL); INSERT INTO \(to).\(name) SELECT * FROM \(from).\(name)"
                    )
                }
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    /// Each entity and join table of `model` in `schema`: its rows as text, `z_opt` left out, sorted.
    static func rows(of schema: String, model: ManagedObjectModel, at url: StoreURL) async throws -> [String: [String]] {
        let layout = StoreSchema(model: model, dialect: PostgresDialect())
        let tables = layout.rootTables.map { $0.name.lowercased() } + layout.allJoinTables.map { $0.name.lowercased() }
        return try await PersistentStore.inspect(url) { connection in
            var result: [String: [String]] = [:]
            for table in tables {
                let rows = try connection.rows(
                    rawSQL: "SELECT to_jsonb(t) - 'z_opt' FROM \(schema.quotedIdentifier).\(table.quotedIdentifier) t"
                )
                result[table] = rows.compactMap { $0[0].text }.sorted()
            }
            return result
        }
    }

    /// The previous version writing through a context, one save per change.
    final class Writer: Sendable {
        let context: ManagedObjectContext

        init(context: ManagedObjectContext) {
            self.context = context
        }

        private func objects(_ entity: String) async throws -> [ManagedObject] {
            var request = FetchRequest(entityName: entity)
            request.sortDescriptors = [FetchRequest.SortDescriptor(key: entity == "Author" ? "name" : entity == "Book" ? "price" : "name")]
            return try await context.fetch(request)
        }

        private func save() async throws {
            try await context.save()
        }

        func book(_ index: Int, _ change: (ManagedObject) -> Void) async throws {
            change(try await objects("Book")[index])
            try await save()
        }

        func link(author: Int, book: Int) async throws {
            try await objects("Book")[book].addDestination(try await objects("Author")[author], forKey: "authors")
            try await save()
        }

        func unlink(author: Int, book: Int) async throws {
            let (book, author) = (try await objects("Book")[book], try await objects("Author")[author])
            book.removeDestination(author, forKey: "authors")
            try await save()
        }

        func retextPage(of index: Int) async throws {
            let pages = try await objects("Book")[index].destinations(forKey: "pages")
            try #require(pages.first).setValue(.string("Neu gesetzt"), forKey: "text")
            try await save()
        }

        func deletePage(of index: Int) async throws {
            let pages = try await objects("Book")[index].destinations(forKey: "pages")
            context.delete(try #require(pages.first))
            try await save()
        }

        @discardableResult
        func movePage(from: Int, to: Int) async throws -> ObjectID {
            let books = try await objects("Book")
            let page = try #require(try await books[from].destinations(forKey: "pages").first)
            page.setDestination(books[to], forKey: "book")
            try await save()
            return page.objectID
        }

        func movePage(_ id: ObjectID, to: Int) async throws {
            let page = try await context.existingObject(with: id)
            page.setDestination(try await objects("Book")[to], forKey: "book")
            try await save()
        }

        func insert(_ entity: String, name: String) async throws {
            try context.insertObject(entityName: entity).setValue(.string(name), forKey: "name")
            try await save()
        }

        func delete(_ entity: String, nth index: Int) async throws {
            context.delete(try await objects(entity)[index])
            try await save()
        }

        func rename(_ entity: String, nth index: Int, to name: String) async throws {
            try await objects(entity)[index].setValue(.string(name), forKey: "name")
            try await save()
        }

        func insertBook(_ title: String, pages: Int, author: Int) async throws {
            let book = try context.insertObject(entityName: "Book")
            book.setValue(.string(title), forKey: "title")
            book.setValue(.double(99.5), forKey: "price")
            for number in 1...pages {
                let page = try context.insertObject(entityName: "Page")
                page.setValue(.integer(Int64(number)), forKey: "number")
                page.setDestination(book, forKey: "book")
            }
            book.addDestination(try await objects("Author")[author], forKey: "authors")
            try await save()
        }

        func deleteAuthor(_ index: Int) async throws {
            context.delete(try await objects("Author")[index])
            try await save()
        }

        func deleteBook(_ index: Int) async throws {
            context.delete(try await objects("Book")[index])
            try await save()
        }

        func insertPage(into index: Int) async throws {
            let page = try context.insertObject(entityName: "Page")
            page.setValue(.integer(9), forKey: "number")
            page.setValue(.string("Nachtrag"), forKey: "text")
            page.setDestination(try await objects("Book")[index], forKey: "book")
            try await save()
        }
    }
}
