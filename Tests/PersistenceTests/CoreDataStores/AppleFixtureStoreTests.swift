import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Every store Apple's Core Data wrote in the fixtures opens as it is: its version known by
/// Core Data's hashes, every row counted through a context as the store's own tables count
/// them, on SQLite and, copied there, on PostgreSQL.
@Suite("Core Data stores: every fixture opens")
struct AppleFixtureStoreTests {
    /// The rows of each entity as the store's tables hold them, read with plain SQL: the
    /// store's own `Z_PRIMARYKEY` names the numbers in `Z_ENT`.
    static func rowsByEntity(_ url: StoreURL) async throws -> [String: Int] {
        let entities = try await storeRows(url, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")
        let numbers = Dictionary(
            uniqueKeysWithValues: entities.compactMap { row in row[0].int64.flatMap { number in row[1].text.map { (Int(number), $0) } } }
        )
        let tables = try await PersistentStore.tables(at: url).map(\.name)
        var counts = Dictionary(uniqueKeysWithValues: numbers.values.map { ($0, 0) })
        for table in tables where table.uppercased().hasPrefix("Z") && !table.uppercased().hasPrefix("Z_") {
            for row in try await storeRows(url, "SELECT Z_ENT, count(*) FROM \(table) GROUP BY Z_ENT") {
                guard let number = row[0].int64, let name = numbers[Int(number)], let count = row[1].int64 else { continue }
                counts[name, default: 0] += Int(count)
            }
        }
        return counts
    }

    @Test(arguments: AppleFixtures.all, TestEngine.allCases)
    func everyStoreIsRecognisedAndEveryRowCounted(store: AppleFixtures.Store, engine: TestEngine) async throws {
        try await AppleFixtures.withStore(store, on: engine) { url, recognised in
            #expect(recognised.model.name == store.versionName)
            #expect(recognised.method == .coreDataVersionHashes)
            let expected = try await Self.rowsByEntity(url)
            let model = try store.model()
            let counted = try await withOpenStore(url, model: model, options: .readOnly) { container in
                let context = container.newContext()
                var counts: [String: Int] = [:]
                for entity in model.entities {
                    counts[entity.name] = try await context.count(for: FetchRequest(entityName: entity.name, includesSubentities: false))
                }
                return counts
            }
            // A renamed entity is still under its old name in Apple's Z_PRIMARYKEY.
            let renamed = Dictionary(
                uniqueKeysWithValues: expected.map { name, count in
                    (model.entities.first { $0.renamingIdentifier == name && model.entity(named: name) == nil }?.name ?? name, count)
                }
            )
            #expect(counted == renamed)
        }
    }

    /// `bookmarks_root`'s five bookmarks are titled 1…5 in their order, which is not their
    /// keys' order (in V5 the keys 5, 10, 4, 1, 3); `favorites_root`'s favourites are in V5
    /// the keys 3, 1, 9, 2, 10 in their order (the fixture's README), titled 5, 4, 33, 32, 2,
    /// as V4's other keys are.
    @Test(arguments: [AppleFixtures.bookmarks[3], AppleFixtures.bookmarks[4]], TestEngine.allCases)
    func orderedRelationshipsReadInTheirOrder(store: AppleFixtures.Store, engine: TestEngine) async throws {
        try await AppleFixtures.withStore(store, on: engine) { url, _ in
            try await withOpenStore(url, model: try store.model()) { container in
                let context = container.newContext()
                let root = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'bookmarks_root'")))
                        .first
                )
                let children = try await root.destinations(forKey: "children")
                #expect(children.map { $0.value(forKey: "title").text } == ["1", "2", "3", "4", "5"])
                let folder = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'favorites_root'")))
                        .first
                )
                let favorites = try await folder.destinations(forKey: "favorites")
                #expect(favorites.map { $0.value(forKey: "title").text } == ["5", "4", "33", "32", "2"])
                if store.file.hasSuffix("V5.sqlite") {
                    #expect(children.compactMap(\.objectID.primaryKey) == [5, 10, 4, 1, 3])
                    #expect(favorites.compactMap(\.objectID.primaryKey) == [3, 1, 9, 2, 10])
                }
                // The other side of the many-to-many, unordered: the folder each favourite is in.
                for favorite in favorites {
                    #expect(try await favorite.destinations(forKey: "favoriteFolders").map(\.objectID) == [folder.objectID])
                }
            }
        }
    }

    /// Version 4 made V3's ordered one-to-many `favorites` (inverse `favoriteFolder`) a
    /// many-to-many: the favourites keep their order, read from the source's own order
    /// column before the step.
    @Test(arguments: TestEngine.allCases)
    func anOrderedOneToManyThatBecomesAManyToManyKeepsItsOrder(engine: TestEngine) async throws {
        let store = AppleFixtures.bookmarks[2]
        try await AppleFixtures.withStore(store, on: engine) { url, _ in
            let expected = try await storeRows(
                url,
                """
                SELECT b.ZUUID FROM ZBOOKMARKENTITY b JOIN ZBOOKMARKENTITY f ON b.ZFAVORITEFOLDER = f.Z_PK \
                WHERE f.ZUUID = 'favorites_root' ORDER BY b.Z_FOK_FAVORITEFOLDER
                """
            ).compactMap { $0[0].text }
            #expect(expected.count == 5)
            let versions = try store.versionedModel()
            _ = try await ProgressiveMigrator(chain: MigrationChain(models: versions), logger: testLogger).migrateStore(
                at: url,
                to: "BookmarksModel 4"
            )
            let model = try #require(versions.version(named: "BookmarksModel 4"))
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let folder = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'favorites_root'")))
                        .first
                )
                #expect(try await folder.destinations(forKey: "favorites").map { $0.value(forKey: "uuid").text } == expected)
            }
        }
    }

    /// What a save adds to an ordered relationship goes at its end, with the order key
    /// Core Data would give it (1 024 after the last), and reads back in that order.
    @Test(arguments: TestEngine.allCases)
    func addingToOrderedRelationshipsKeepsTheirOrder(engine: TestEngine) async throws {
        let store = AppleFixtures.bookmarks[4]
        try await AppleFixtures.withStore(store, on: engine) { url, _ in
            let model = try store.model()
            let lastChild = try #require(try await storeRows(url, "SELECT max(Z_FOK_PARENT) FROM ZBOOKMARKENTITY WHERE ZPARENT = 8").first?[0].int64)
            let lastFavorite = try #require(
                try await storeRows(url, "SELECT max(Z_FOK_1FAVORITES) FROM Z_1FAVORITES WHERE Z_1FAVORITEFOLDERS = 6").first?[0].int64
            )
            let (newKey, sixKey) = try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let root = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'bookmarks_root'")))
                        .first
                )
                let folder = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'favorites_root'")))
                        .first
                )
                let six = try context.insertObject(entityName: "BookmarkEntity")
                six.setValue("6", forKey: "title")
                six.setValue("six", forKey: "uuid")
                six.setValue(false, forKey: "isFolder")
                root.addDestination(six, forKey: "children")
                // Key 4 is a bookmark under bookmarks_root, not yet a favourite.
                let four = try #require(
                    try await context.existingObjects(with: [
                        ObjectID(entityName: "BookmarkEntity", rootEntityName: "BookmarkEntity", key: .permanent(4))
                    ]).first
                )
                folder.addDestination(four, forKey: "favorites")
                folder.addDestination(six, forKey: "favorites")
                try await context.save()
                return (try #require(six.objectID.primaryKey), try #require(four.objectID.primaryKey))
            }
            #expect(try await storeRows(url, "SELECT Z_FOK_PARENT FROM ZBOOKMARKENTITY WHERE Z_PK = \(newKey)") == [[.integer(lastChild + 1_024)]])
            #expect(
                try await storeRows(
                    url,
                    "SELECT Z_1FAVORITES, Z_FOK_1FAVORITES FROM Z_1FAVORITES WHERE Z_1FAVORITEFOLDERS = 6 AND Z_FOK_1FAVORITES > \(lastFavorite) ORDER BY Z_FOK_1FAVORITES"
                )
                    == [[.integer(sixKey), .integer(lastFavorite + 1_024)], [.integer(newKey), .integer(lastFavorite + 2_048)]]
            )
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let root = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'bookmarks_root'")))
                        .first
                )
                #expect(try await root.destinations(forKey: "children").map { $0.value(forKey: "title").text } == ["1", "2", "3", "4", "5", "6"])
                let folder = try #require(
                    try await context.fetch(FetchRequest(entityName: "BookmarkEntity", predicate: try Predicate(format: "uuid == 'favorites_root'")))
                        .first
                )
                #expect(try await folder.destinations(forKey: "favorites").compactMap(\.objectID.primaryKey) == [3, 1, 9, 2, 10, sixKey, newKey])
            }
        }
    }

    /// A to-many without an inverse is Core Data's hidden key on the destination's table
    /// (`ZCDCARTITEMMODIFIER.Z2MODIFIERS`): a cart item's modifiers read and saved through it.
    @Test(arguments: TestEngine.allCases)
    func aToManyWithoutInverseIsTheDestinationsHiddenKey(engine: TestEngine) async throws {
        let store = AppleFixtures.cart[0]
        try await AppleFixtures.withStore(store, on: engine) { url, _ in
            let model = try store.model()
            let added = try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let item = try #require(try await context.fetch(FetchRequest(entityName: "CDCartItem")).first)
                #expect(try await item.destinations(forKey: "modifiers").isEmpty)
                var added: [Int64] = []
                for (name, cents) in [("Extra cheese", "1.50"), ("Sans oignons", "0"), ("Größer", "2.25")] {
                    let modifier = try context.insertObject(entityName: "CDCartItemModifier")
                    modifier.setValue(.string(UUID().uuidString), forKey: "id")
                    modifier.setValue(.string(name), forKey: "name")
                    modifier.setValue(.decimal(try #require(Decimal(string: cents))), forKey: "priceDeltaAmount")
                    modifier.setValue("EUR", forKey: "priceDeltaCurrencyCode")
                    item.addDestination(modifier, forKey: "modifiers")
                    try await context.save()
                    added.append(try #require(modifier.objectID.primaryKey))
                }
                return added
            }
            let itemKey = try #require(try await storeRows(url, "SELECT Z_PK FROM ZCDCARTITEM").first?[0].int64)
            #expect(
                try await storeRows(url, "SELECT Z_PK FROM ZCDCARTITEMMODIFIER WHERE Z2MODIFIERS = \(itemKey) ORDER BY Z_PK").map { $0[0] }
                    == added.map(DatabaseValue.integer)
            )
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let item = try #require(try await context.fetch(FetchRequest(entityName: "CDCartItem")).first)
                let modifiers = try await item.destinations(forKey: "modifiers")
                #expect(Set(modifiers.map { $0.value(forKey: "name").text }) == ["Extra cheese", "Sans oignons", "Größer"])
                // Deleting the item cascades to its modifiers through the hidden key.
                context.delete(item)
                try await context.save()
            }
            #expect(try await storeRows(url, "SELECT count(*) FROM ZCDCARTITEMMODIFIER") == [[.integer(0)]])
        }
    }

    /// An ordered many-to-many ordered on both sides keeps one order column per side
    /// (`Z_FOK_4CREATEDENTRIES`: a post's place among its author's entries, `Z_FOK_2AUTHORS`:
    /// an author's place among the post's authors), as Core Data lays them out.
    @Test(arguments: TestEngine.allCases)
    func anOrderedManyToManyKeepsAnOrderPerSide(engine: TestEngine) async throws {
        let store = AppleFixtures.contentful[0]
        try await AppleFixtures.withStore(store, on: engine) { url, _ in
            let model = try store.model()
            let (author, posts) = try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let author = try context.insertObject(entityName: "Author")
                author.setValue("Zoë Ñúñez", forKey: "name")
                author.setValue("author-1", forKey: "id")
                var posts: [ManagedObject] = []
                for title in ["Erster", "Second", "第三"] {
                    let post = try context.insertObject(entityName: "Post")
                    post.setValue(.string(title), forKey: "title")
                    post.setValue(.string("post-\(posts.count)"), forKey: "id")
                    posts.append(post)
                }
                try await context.save()
                // Entries in an order other than their keys'.
                for post in [posts[2], posts[0], posts[1]] { author.addDestination(post, forKey: "createdEntries") }
                try await context.save()
                return (try #require(author.objectID.primaryKey), try posts.map { try #require($0.objectID.primaryKey) })
            }
            #expect(
                try await storeRows(
                    url,
                    "SELECT Z_4CREATEDENTRIES, Z_FOK_4CREATEDENTRIES, Z_FOK_2AUTHORS FROM Z_2CREATEDENTRIES WHERE Z_2AUTHORS = \(author) ORDER BY Z_FOK_4CREATEDENTRIES"
                )
                    == [
                        [.integer(posts[2]), .integer(2_048), .integer(2_048)], [.integer(posts[0]), .integer(3_072), .integer(2_048)],
                        [.integer(posts[1]), .integer(4_096), .integer(2_048)],
                    ]
            )
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let read = try #require(try await context.fetch(FetchRequest(entityName: "Author")).first)
                #expect(try await read.destinations(forKey: "createdEntries").map { $0.value(forKey: "title").text } == ["第三", "Erster", "Second"])
                let post = try #require(
                    try await context.fetch(FetchRequest(entityName: "Post", predicate: try Predicate(format: "title == 'Second'"))).first
                )
                #expect(try await post.destinations(forKey: "authors").compactMap(\.objectID.primaryKey) == [author])
            }
        }
    }

    /// Feedback's first store migrates along the project's own Xcode mapping models to the
    /// sixth version: its events and text messages (messages from version 5 on) and senders
    /// arrive, counted from the source's own tables.
    @Test(arguments: TestEngine.allCases)
    func theFeedbackStoreMigratesAlongItsXcodeMappingModels(engine: TestEngine) async throws {
        let store = AppleFixtures.feedback[0]
        try await AppleFixtures.withStore(store, on: engine) { url, _ in
            let source = try await Self.rowsByEntity(url)
            let versions = try store.versionedModel()
            let mappings = try MappingModel.load(directory: AppleFixtures.root.appendingPathComponent("Feedback/mappings"), versions: versions)
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions, mappingModels: mappings), logger: testLogger)
            _ = try await migrator.migrateStore(at: url)
            let migrated = try await withOpenStore(url, model: versions.current) { container in
                let context = container.newContext()
                return [
                    try await context.count(for: FetchRequest(entityName: "ATEvent")),
                    try await context.count(for: FetchRequest(entityName: "ATMessage")),
                    try await context.count(for: FetchRequest(entityName: "ATMessageSender")),
                ]
            }
            let messages = ["ATTextMessage", "ATAutomatedMessage", "ATFileMessage"].compactMap { source[$0] }.reduce(0, +)
            #expect(migrated == [source["ATEvent"] ?? 0, messages, source["ATMessageSender"] ?? 0])
            #expect(migrated.allSatisfy { $0 > 0 })
        }
    }

    /// Damaged on purpose upstream: the store's hashes are version 3's, its tables version
    /// 2's. Refused, saying so, and left as it was.
    @Test func aStoreThatContradictsItselfIsRefused() async throws {
        let store = AppleFixtures.feedbackDamaged
        try await AppleFixtures.withCopy(of: store) { url in
            let path = try #require(url.filePath)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let error = await #expect(throws: StoreError.self) { try await store.versionedModel().recogniseVersion(ofStoreAt: url) }
            #expect(error?.code == .inconsistentStore)
            #expect(
                error?.message.contains("the store's entity version hashes say 'ATDataModel 3' wrote it, but its tables are those of 'ATDataModel 2'")
                    == true,
                "\(String(describing: error))"
            )
            #expect(error?.hint?.contains("damaged") == true)
            // The command says the same, and only that.
            let output = try await persistenceCommand.run(["inspect", "--store", "sqlite://\(path)", "--models", store.modelsURL.path])
            #expect(output.status != 0)
            #expect(
                output.stderr.contains("the store's entity version hashes say 'ATDataModel 3' wrote it, but its tables are those of 'ATDataModel 2'"),
                "\(output.stderr)"
            )
            #expect(!output.stderr.contains("cannot read"), "\(output.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }
}

extension AppleFixtures {
    /// Runs `body` with the fixture store on `engine`: a copy of its files on SQLite, a copy
    /// into a new database on PostgreSQL (``StoreCopy``, which keeps every key and table
    /// name); and with the version the SQLite copy was recognised as.
    static func withStore<T>(
        _ store: Store,
        on engine: TestEngine,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (StoreURL, RecognisedStoreVersion) async throws -> T
    ) async throws -> T {
        try await withCopy(of: store, sourceLocation: sourceLocation) { url in
            let versions = try store.versionedModel()
            let recognised = try await versions.recogniseVersion(ofStoreAt: url)
            switch engine {
            case .sqlite:
                return try await body(url, recognised)
            case .postgres:
                return try await engine.withStoreURL { postgres in
                    let summary = try await StoreCopy.copy(from: url, to: postgres, versions: versions, logger: testLogger)
                    #expect(summary.modelVersion == store.versionName, sourceLocation: sourceLocation)
                    return try await body(postgres, recognised)
                }
            }
        }
    }
}

extension AttributeValue {
    /// The text of a string value, for comparisons in tests.
    fileprivate var text: String? {
        if case .string(let text) = self { text } else { nil }
    }
}
