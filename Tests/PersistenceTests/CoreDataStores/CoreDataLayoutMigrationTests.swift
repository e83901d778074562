import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

enum PlaylistVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Playlists 1"
    case v2 = "Playlists 2"
    var modelName: String { rawValue }
    func nextVersion() -> PlaylistVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? StreamingManager.self : MigrationManager.self }
}

/// Stores the framework creates, and every migration step it writes, are laid out as Core
/// Data lays them out: a to-many without an inverse is a hidden key on its destination's
/// rows (`ZTRACK.Z<n>TRACKS`, with `Z_FOK_<n>TRACKS` when ordered), and a to-one whose
/// destination has sub-entities keeps that row's entity beside its key
/// (`ZREVIEW.Z<m>_SUBJECT`). Each step kind is checked against what the test wrote.
@Suite("Core Data's layout through every kind of migration step")
struct CoreDataLayoutMigrationTests {
    static let playlists = """
        <entity name="Playlist" representedClassName="Playlist">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="tracks" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Track"/>
            <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag"/>
            NOTE
        </entity>
        <entity name="Track" representedClassName="Track">
            <attribute name="title" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Tag" representedClassName="Tag">
            <attribute name="label" optional="YES" attributeType="String"/>
        </entity>
        """
    static let media = """
        <entity name="Media" representedClassName="Media">
            <attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="reviews" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Review" inverseName="subject" inverseEntity="Review"/>
        </entity>
        <entity name="Song" representedClassName="Song" parentEntity="Media">
            <attribute name="artist" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Film" representedClassName="Film" parentEntity="Media">
            <attribute name="director" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Review" representedClassName="Review">
            <attribute name="text" optional="YES" attributeType="String"/>
            <relationship name="subject" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Media" inverseName="reviews" inverseEntity="Media"/>
        </entity>
        """

    /// Version 1 or 2 (which adds `Playlist.note`), with or without the media entities.
    static func model(_ version: Int, media: Bool) throws -> ManagedObjectModel {
        let note = version == 2 ? #"<attribute name="note" optional="YES" attributeType="String"/>"# : ""
        let body = playlists.replacingOccurrences(of: "NOTE", with: note) + (media ? Self.media : "")
        return try ManagedObjectModel(xml: ModelFixtures.xml(body), name: "Playlists \(version)", file: ModelFixtures.file)
    }

    /// How the step runs.
    enum Step: String, CaseIterable, CustomTestStringConvertible {
        /// Inferred: in place, the hidden keys and entity types carried.
        case inPlace
        /// A store of an earlier release, whose to-many without an inverse is a join table,
        /// migrated in place: the pairs move to the hidden key.
        case inPlaceFromAJoinTable
        /// A mapping model run as `INSERT … SELECT`.
        case setBased
        /// A custom migration manager: every instance through the manager.
        case streamed
        /// On PostgreSQL, while the store stays open.
        case online

        var testDescription: String { rawValue }
        /// The set-based step looks up plain entities only: the media part is left out.
        var hasMedia: Bool { self != .setBased }
        var strategy: MigrationPlan.Strategy {
            switch self {
            case .inPlace, .inPlaceFromAJoinTable: .inPlace
            case .setBased: .setBased
            case .streamed, .online: .streamed
            }
        }
    }

    /// What the test writes: playlists with their tracks in an order unlike key order, tags,
    /// reviews of songs and films.
    static let tracks = ["Ouvertüre", "Zwischenspiel", "Ständchen", "Finale", "Étude", "Nocturne", "Coda"]
    static let playlistTracks: [(name: String?, tracks: [Int], tags: [String])] = [
        ("Morgen", [4, 0, 2], ["ruhig", "Klavier"]),
        ("Nacht ☾", [6, 1, 5, 3], ["laut"]),
        (nil, [], []),
    ]
    static let reviews: [(text: String, subject: (entity: String, title: String)?)] = [
        ("wunderbar", ("Song", "Lied an den Mond")),
        ("zu lang", ("Film", "Metropolis")),
        ("ohne Gegenstand", nil),
        ("noch einmal", ("Song", "Erlkönig")),
    ]

    /// Every step on both engines; online only where it runs, on PostgreSQL.
    static let cases: [(TestEngine, Step)] = TestEngine.allCases.flatMap { engine in
        Step.allCases.filter { $0 != .online || engine == .postgres }.map { (engine, $0) }
    }

    @Test(arguments: cases)
    func everyStepWritesCoreDatasLayout(engine: TestEngine, step: Step) async throws {
        let v1 = try Self.model(1, media: step.hasMedia)
        let v2 = try Self.model(2, media: step.hasMedia)
        let models = try VersionedModel(name: "Playlists", versions: [v1, v2], currentVersionName: "Playlists 2")
        try await engine.withStoreURL { url in
            try await Self.write(url, model: v1, media: step.hasMedia)
            // The new store is Core Data's layout already.
            try await Self.expectCoreDataLayout(url, media: step.hasMedia)
            if step == .inPlaceFromAJoinTable { try await Self.asAnEarlierReleaseWroteIt(url) }

            let plan: MigrationPlan?
            switch step {
            case .inPlace, .inPlaceFromAJoinTable:
                plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger).migrateStore(at: url)
            case .setBased:
                var mapping = try MappingModel.inferred(from: v1, to: v2)
                mapping.isInferred = false
                plan = try await ProgressiveMigrator(chain: MigrationChain(models: models, mappingModels: [mapping]), logger: testLogger)
                    .migrateStore(at: url)
            case .streamed:
                let chain = try MigrationChain(PlaylistVersion.self, models: models)
                plan = try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
            case .online:
                let chain = MigrationChain(models: models)
                try await ProgressiveMigrator(chain: chain, batchSize: 2, logger: testLogger).migrateStoreOnline(
                    at: url,
                    options: OnlineMigrationOptions()
                )
                plan = nil
            }
            if let plan { #expect(plan.steps.map(\.strategy) == [step.strategy], "\(plan.steps.map(\.description))") }
            try await Self.expectCoreDataLayout(url, media: step.hasMedia)
            try await Self.expectWhatWasWritten(url, model: v2, media: step.hasMedia)
        }
    }

    /// Writes the playlists (tracks added in the order listed) and the reviews.
    static func write(_ url: StoreURL, model: ManagedObjectModel, media: Bool) async throws {
        try await withOpenStore(url, model: model, options: .createIfMissing) { container in
            let context = container.newContext()
            var trackObjects: [ManagedObject] = []
            for title in tracks {
                let track = try context.insertObject(entityName: "Track")
                track.setValue(.string(title), forKey: "title")
                trackObjects.append(track)
            }
            for entry in playlistTracks {
                let playlist = try context.insertObject(entityName: "Playlist")
                playlist.setValue(entry.name.map(AttributeValue.string) ?? .null, forKey: "name")
                for index in entry.tracks { playlist.addDestination(trackObjects[index], forKey: "tracks") }
                for label in entry.tags {
                    let tag = try context.insertObject(entityName: "Tag")
                    tag.setValue(.string(label), forKey: "label")
                    playlist.addDestination(tag, forKey: "tags")
                }
            }
            if media {
                for review in reviews {
                    let object = try context.insertObject(entityName: "Review")
                    object.setValue(.string(review.text), forKey: "text")
                    if let subject = review.subject {
                        let target = try context.insertObject(entityName: subject.entity)
                        target.setValue(.string(subject.title), forKey: "title")
                        object.setDestination(target, forKey: "subject")
                    }
                }
            }
            try await context.save()
        }
    }

    /// The entity number Core Data's `Z_PRIMARYKEY` gives `entity` in the store.
    static func number(of entity: String, in url: StoreURL) async throws -> Int64 {
        try #require(try await storeRows(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", [.text(entity)]).first?.first?.int64)
    }

    /// The hidden keys and entity-type columns hold what the test wrote, read with SQL by
    /// Core Data's names; no join table holds a to-many without an inverse.
    static func expectCoreDataLayout(_ url: StoreURL, media: Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let n = try await number(of: "Playlist", in: url)
        let pairs = try await storeRows(
            url,
            """
            SELECT p.ZNAME, t.ZTITLE FROM ZTRACK t JOIN ZPLAYLIST p ON p.Z_PK = t.Z\(n)TRACKS ORDER BY p.Z_PK, t.Z_FOK_\(n)TRACKS
            """
        )
        let expected = playlistTracks.flatMap { entry in entry.tracks.map { [entry.name.map(DatabaseValue.text) ?? .null, .text(tracks[$0])] } }
        #expect(pairs == expected, sourceLocation: sourceLocation)
        let tags = try await storeRows(url, "SELECT p.ZNAME, t.ZLABEL FROM ZTAG t JOIN ZPLAYLIST p ON p.Z_PK = t.Z\(n)TAGS")
        #expect(
            Set(tags.map { "\($0[0].text ?? "-")/\($0[1].text ?? "-")" })
                == Set(playlistTracks.flatMap { entry in entry.tags.map { "\(entry.name ?? "-")/\($0)" } }),
            sourceLocation: sourceLocation
        )
        let joinTables =
            url.testEngine == .postgres
            ? "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'z\\_%'"
            : "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')"
        let bookkeeping = url.testEngine == .postgres ? 3 : 0
        #expect(try await storeRows(url, joinTables) == [[.integer(Int64(bookkeeping))]], "no join table", sourceLocation: sourceLocation)
        guard media else { return }
        let m = try await number(of: "Media", in: url)
        let subjects = try await storeRows(
            url,
            """
            SELECT r.ZTEXT, e.Z_NAME, s.ZTITLE FROM ZREVIEW r JOIN Z_PRIMARYKEY e ON e.Z_ENT = r.Z\(m)_SUBJECT JOIN ZMEDIA s ON s.Z_PK = r.ZSUBJECT
            """
        )
        #expect(
            Set(subjects.map { $0.map { $0.text ?? "-" }.joined(separator: "/") })
                == Set(reviews.compactMap { review in review.subject.map { "\(review.text)/\($0.entity)/\($0.title)" } }),
            sourceLocation: sourceLocation
        )
        #expect(
            try await storeRows(url, "SELECT count(*) FROM ZREVIEW WHERE ZSUBJECT IS NULL AND Z\(m)_SUBJECT IS NULL")
                == [[.integer(Int64(reviews.filter { $0.subject == nil }.count))]],
            sourceLocation: sourceLocation
        )
    }

    /// Read through a context: the tracks in their order, the tags, each review's subject.
    static func expectWhatWasWritten(_ url: StoreURL, model: ManagedObjectModel, media: Bool) async throws {
        try await withOpenStore(url, model: model) { container in
            let context = container.newContext()
            let playlists = try await context.fetch(FetchRequest(entityName: "Playlist"))
            #expect(playlists.count == playlistTracks.count)
            for entry in playlistTracks {
                let playlist = try #require(playlists.first { $0.value(forKey: "name").stringValue == entry.name })
                #expect(
                    try await playlist.destinations(forKey: "tracks").map { $0.value(forKey: "title").stringValue } == entry.tracks.map { tracks[$0] }
                )
                #expect(Set(try await playlist.destinations(forKey: "tags").compactMap { $0.value(forKey: "label").stringValue }) == Set(entry.tags))
            }
            guard media else { return }
            for review in reviews {
                let request = FetchRequest(entityName: "Review", predicate: try Predicate(format: "text == %@", .string(review.text)))
                let object = try #require(try await context.fetch(request).first)
                let subject = try await object.destination(forKey: "subject")
                #expect(subject?.objectID.entityName == review.subject?.entity)
                #expect(subject?.value(forKey: "title").stringValue == review.subject?.title)
            }
        }
    }

    /// Turns the store into the layout the first releases of this framework wrote: the
    /// playlists' to-many relationships in join tables `Z_<n><NAME>` (`Z_<n>INVERSE_<NAME>`,
    /// `Z_<nD><NAME>`, `Z_FOK_<n><NAME>`), no hidden keys.
    static func asAnEarlierReleaseWroteIt(_ url: StoreURL) async throws {
        let n = try await number(of: "Playlist", in: url)
        var statements: [String] = []
        for (name, table, ordered) in [("TRACKS", "ZTRACK", true), ("TAGS", "ZTAG", false)] {
            let d = try await number(of: table == "ZTRACK" ? "Track" : "Tag", in: url)
            let order = ordered ? ", Z_FOK_\(n)\(name) INTEGER" : ""
            statements.append(
                "CREATE TABLE Z_\(n)\(name) (Z_\(n)INVERSE_\(name) INTEGER, Z_\(d)\(name) INTEGER\(order), PRIMARY KEY (Z_\(n)INVERSE_\(name), Z_\(d)\(name)))"
            )
            statements.append(
                """
                INSERT INTO Z_\(n)\(name) SELECT Z\(n)\(name), Z_PK\(ordered ? ", Z_FOK_\(n)\(name)" : "") FROM \(table) WHERE Z\(n)\(name) IS NOT NULL
                """
            )
            if url.testEngine != .postgres {
                for index in try await storeRows(
                    url,
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql LIKE ?",
                    [.text(table), .text("%Z\(n)\(name)%")]
                ) {
                    statements.append("DROP INDEX \(index[0].text ?? "")")
                }
            }
            if ordered { statements.append("ALTER TABLE \(table) DROP COLUMN Z_FOK_\(n)\(name)") }
            statements.append("ALTER TABLE \(table) DROP COLUMN Z\(n)\(name)")
        }
        try await inspectWritable(url) { connection in
            for statement in statements { try connection.execute(rawSQL: statement) }
        }
        #expect(try await storeRows(url, "SELECT count(*) FROM Z_\(n)TRACKS") == [[.integer(Int64(playlistTracks.flatMap(\.tracks).count))]])
    }
}

enum BlogVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Blog 1"
    case v2 = "Blog 2"
    var modelName: String { rawValue }
    func nextVersion() -> BlogVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? StreamingManager.self : MigrationManager.self }
}

/// Two streamed steps through a manager that reads only what it is given.
enum TwoStepBlogVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Blog 1"
    case v2 = "Blog 2"
    case v3 = "Blog 3"
    var modelName: String { rawValue }
    func nextVersion() -> TwoStepBlogVersion? { self == .v1 ? .v2 : self == .v2 ? .v3 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v1 ? MigrationManager.self : SelfContainedStreamingManager.self }
}

/// A custom manager (so the step streams) whose hooks read only the objects they are given,
/// so consecutive steps may run as one pass.
final class SelfContainedStreamingManager: MigrationManager, @unchecked Sendable {
    override class var fetchesFromStores: Bool { false }
}

/// An ordered many-to-many ordered on both sides keeps both orders through a step that
/// renumbers its entities (so every join column and both order columns are renamed), however
/// the step runs.
@Suite("Ordered many-to-many through every kind of step")
struct OrderedManyToManyMigrationTests {
    enum Step: String, CaseIterable, CustomTestStringConvertible {
        /// Inferred: in place on SQLite; PostgreSQL rebuilds a store whose every row is renumbered.
        case inferred
        case setBased
        case streamed
        /// Two streamed steps, one after the other: a many-to-many set one pair at a time
        /// keeps them from running as one pass (see `orderedOneToManyThroughAFusedPass`).
        case twoStreamed
        /// On PostgreSQL while the store stays open, in batches of two.
        case online
        var testDescription: String { rawValue }
    }

    static let cases: [(TestEngine, Step)] = TestEngine.allCases.flatMap { engine in
        Step.allCases.filter { $0 != .online || engine == .postgres }.map { (engine, $0) }
    }

    static func model(_ version: Int) throws -> ManagedObjectModel {
        let added =
            (version >= 2
                ? #"<entity name="Archive" representedClassName="Archive"><attribute name="label" optional="YES" attributeType="String"/></entity>"#
                : "")
            + (version >= 3
                ? #"<entity name="Draft" representedClassName="Draft"><attribute name="text" optional="YES" attributeType="String"/></entity>"# : "")
        return try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                \(added)
                <entity name="Author" representedClassName="Author">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="entries" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Post" inverseName="authors" inverseEntity="Post"/>
                </entity>
                <entity name="Post" representedClassName="Post">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <relationship name="authors" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Author" inverseName="entries" inverseEntity="Author"/>
                </entity>
                """
            ),
            name: "Blog \(version)",
            file: ModelFixtures.file
        )
    }

    /// The pairs, added one after the other from the authors' side: each author's entries and
    /// each post's authors are in the order their pairs were added, unlike key order.
    static let adds = [("Brontë", "Eins"), ("Ada", "Drei"), ("Brontë", "Zwei"), ("Ada", "Eins"), ("Brontë", "Drei")]
    static let names = ["Ada", "Brontë", "Čapek"], titles = ["Eins", "Zwei", "Drei"]
    static var entries: [String: [String]] { Dictionary(uniqueKeysWithValues: names.map { name in (name, adds.filter { $0.0 == name }.map(\.1)) }) }
    static var authors: [String: [String]] {
        Dictionary(uniqueKeysWithValues: titles.map { title in (title, adds.filter { $0.1 == title }.map(\.0)) })
    }

    @Test(arguments: cases)
    func bothOrdersSurviveRenumbering(engine: TestEngine, step: Step) async throws {
        let v1 = try Self.model(1)
        let v2 = try Self.model(2)
        let v3 = try Self.model(3)
        let models =
            step == .twoStreamed
            ? try VersionedModel(name: "Blog", versions: [v1, v2, v3], currentVersionName: "Blog 3")
            : try VersionedModel(name: "Blog", versions: [v1, v2], currentVersionName: "Blog 2")
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: v1, options: .createIfMissing) { container in
                let context = container.newContext()
                var authors: [String: ManagedObject] = [:]
                var posts: [String: ManagedObject] = [:]
                for name in Self.names {
                    authors[name] = try context.insertObject(entityName: "Author")
                    authors[name]?.setValue(.string(name), forKey: "name")
                }
                for title in Self.titles {
                    posts[title] = try context.insertObject(entityName: "Post")
                    posts[title]?.setValue(.string(title), forKey: "title")
                }
                try await context.save()
                for (name, title) in Self.adds {
                    try #require(authors[name]).addDestination(try #require(posts[title]), forKey: "entries")
                    try await context.save()
                }
            }
            try await Self.expectOrders(url, model: v1)
            let chain: MigrationChain
            switch step {
            case .inferred:
                chain = MigrationChain(models: models)
            case .setBased:
                var mapping = try MappingModel.inferred(from: v1, to: v2)
                mapping.isInferred = false
                chain = MigrationChain(models: models, mappingModels: [mapping])
            case .streamed:
                chain = try MigrationChain(BlogVersion.self, models: models)
            case .online:
                chain = MigrationChain(models: models)
            case .twoStreamed:
                chain = try MigrationChain(TwoStepBlogVersion.self, models: models)
            }
            let migrator = ProgressiveMigrator(chain: chain, batchSize: 2, logger: testLogger)
            let plan =
                step == .online
                ? try await migrator.migrateStoreOnline(at: url, options: OnlineMigrationOptions())
                : try await migrator.migrateStore(at: url)
            let expected: [MigrationPlan.Strategy] =
                switch step {
                case .inferred: [engine == .sqlite ? .inPlace : .setBased]
                case .setBased: [.setBased]
                case .streamed: [.streamed]
                // The bulk pass as the plan chooses it, then catch-up rounds.
                case .online: [.setBased]
                case .twoStreamed: [.streamed, .streamed]
                }
            #expect(plan.steps.map(\.strategy) == expected, "\(plan.steps.map(\.description))")
            try await Self.expectOrders(url, model: models.current)
        }
    }

    /// Both sides of the ordered many-to-many read back in the order the test wrote.
    static func expectOrders(
        _ url: StoreURL,
        model: ManagedObjectModel,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await withOpenStore(url, model: model) { container in
            let context = container.newContext()
            for author in try await context.fetch(FetchRequest(entityName: "Author")) {
                let name = try #require(author.value(forKey: "name").stringValue)
                #expect(
                    try await author.destinations(forKey: "entries").map { $0.value(forKey: "title").stringValue ?? "-" } == Self.entries[name],
                    "\(name)'s entries",
                    sourceLocation: sourceLocation
                )
            }
            var postsAuthors: [String: [String]] = [:]
            for post in try await context.fetch(FetchRequest(entityName: "Post")) {
                let title = try #require(post.value(forKey: "title").stringValue)
                postsAuthors[title] = try await post.destinations(forKey: "authors").map { $0.value(forKey: "name").stringValue ?? "-" }
            }
            #expect(postsAuthors == Self.authors, "the posts' authors", sourceLocation: sourceLocation)
        }
    }
}
