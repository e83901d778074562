import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

// "Custom Core Data Migrations" (objc.io issue 4):
// Books → Books 2: `Book.authorName` becomes an `Author` entity in a many-to-many with
// `Book` (`authors` ↔ `books`), one author per distinct name, found again through the
// migration manager's `userInfo`;
// Books 2 → Books 3: a `File` between `User` and `Book` (User ↔ files ↔ File ↔ book ↔ Book)
// replaces their many-to-many; the policy of `BookToBook` looks up the users' destination
// instances, so the `UserToUser` entity mapping must come first. The same step also runs
// as two mapping models, one after the other.

enum BooksVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Books"
    case v2 = "Books 2"
    case v3 = "Books 3"

    var modelName: String { rawValue }

    func nextVersion() -> BooksVersion? {
        switch self {
        case .v1: .v2
        case .v2: .v3
        case .v3: nil
        }
    }
}

/// The same versions, with the step into Books 3 run as two mapping models the chain names
/// in order: users and authors first, then the books whose policy finds them.
enum SplitBooksVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Books"
    case v2 = "Books 2"
    case v3 = "Books 3"

    var modelName: String { rawValue }
    var mappingModelNames: [String] { self == .v3 ? ["Books2To3Part1", "Books2To3Part2"] : [] }

    func nextVersion() -> SplitBooksVersion? { BooksVersion(rawValue: rawValue)?.nextVersion().flatMap { SplitBooksVersion(rawValue: $0.rawValue) } }
}

/// A version that names a mapping model no file has.
enum MisnamedBooksVersion: String, MigrationVersion, CaseIterable {
    case v2 = "Books 2"
    case v3 = "Books 3"

    var modelName: String { rawValue }
    var mappingModelNames: [String] { self == .v3 ? ["Books2To3Part1", "Books2To3Part3"] : [] }

    func nextVersion() -> MisnamedBooksVersion? { self == .v2 ? .v3 : nil }
}

/// Books → Books 2: the book's author becomes an `Author`, one per name. An author's
/// ObjectID is kept in the manager's `userInfo`; it is saved first, so the ID is permanent
/// and outlives the batch whose context made it. (The ports that do not save are
/// `AuthorLookupAcrossBatchesTests`'.)
class BookToBookAuthorPolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override func author(named name: String, manager: MigrationManager) async throws -> ManagedObject {
        let context = manager.destinationContext
        let key = "author:\(name)"
        if let id = manager.userInfo[key] as? ObjectID {
            return try await context.existingObject(with: id)
        }
        let author = try context.insertObject(entityName: "Author")
        author.setValue(.string(name), forKey: "name")
        try await context.save()
        manager.userInfo[key] = author.objectID
        return author
    }
}

/// The same, failing on the 1 700th book: in the second batch, after the first was written.
final class FailingBookToBookAuthorPolicy: BookToBookAuthorPolicy, @unchecked Sendable {
    private var books = 0

    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        books += 1
        if books == 1_700 { throw ScenarioPolicyError("book 1700 fails") }
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }
}

/// Books 2 → Books 3 in one mapping model: one `File` for each user of a book, the users
/// found as `UserToUser`'s destination instances.
final class BookToBookFilePolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let books = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        guard let book = books.first else { throw ScenarioPolicyError("\(source.objectID) has no destination book") }
        let sourceUsers = try await source.destinations(forKey: "users")
        let users = try await manager.destinationInstances(forEntityMappingNamed: "UserToUser", sourceInstances: sourceUsers)
        guard users.count == sourceUsers.count else {
            throw ScenarioPolicyError(
                "the users of '\(source.value(forKey: "title").stringValue ?? "")' are not migrated yet: UserToUser must come before BookToBook"
            )
        }
        for user in users {
            let file = try manager.destinationContext.insertObject(entityName: "File")
            file.setDestination(user, forKey: "user")
            file.setDestination(book, forKey: "book")
        }
    }
}

/// Books 2 → Books 3, second mapping model: users and authors were made by the first, whose
/// associations this manager does not know, so they are found by name in the destination
/// store (Core Data's advice for relationships across passes), their IDs kept in `userInfo`.
final class BookToBookSecondPassPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let books = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        guard let book = books.first else { throw ScenarioPolicyError("\(source.objectID) has no destination book") }
        for user in try await source.destinations(forKey: "users") {
            let file = try manager.destinationContext.insertObject(entityName: "File")
            file.setDestination(try await Self.find("User", named: user.value(forKey: "name"), manager: manager), forKey: "user")
            file.setDestination(book, forKey: "book")
        }
    }

    /// Authors in the relationship stage: the book's source instance comes back through
    /// `sourceInstances(forEntityMappingNamed:destinationInstances:)`.
    override func createRelationships(forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createRelationships(forDestination: destination, in: mapping, manager: manager)
        let sources = try await manager.sourceInstances(forEntityMappingNamed: mapping.name, destinationInstances: [destination])
        guard let source = sources.first else { throw ScenarioPolicyError("\(destination.objectID) has no source book") }
        for author in try await source.destinations(forKey: "authors") {
            destination.addDestination(try await Self.find("Author", named: author.value(forKey: "name"), manager: manager), forKey: "authors")
        }
    }

    static func find(_ entity: String, named name: AttributeValue, manager: MigrationManager) async throws -> ManagedObject {
        let context = manager.destinationContext
        let key = "\(entity):\(name)"
        if let id = manager.userInfo[key] as? ObjectID {
            return try await context.existingObject(with: id)
        }
        let found = try await context.fetch(FetchRequest(entityName: entity, predicate: try Predicate(format: "name == %@", .value(name))))
        guard found.count == 1, let object = found.first else {
            throw ScenarioPolicyError("\(found.count) \(entity) objects are named \(name) in the destination store")
        }
        manager.userInfo[key] = object.objectID
        return object
    }
}

enum Books {
    static func models() throws -> VersionedModel { try Scenario.models("CustomMigrations", "Books") }

    static let authors = ["Jane Austen", "Charles Dickens", "Mark Twain", "Virginia Woolf", "Leo Tolstoy", "Toni Morrison", "Chinua Achebe"]
    static let users = ["alice", "bob", "carol", "dave", "erin"]
    static let anonymous = ["Anonymous 1", "Anonymous 2", "Anonymous 3"]

    static func title(_ index: Int) -> String { String(format: "Book %04d", index) }

    /// The users who own book `index`: every third book has one, every tenth another.
    static func owners(_ index: Int) -> [Int] {
        var owners: Set<Int> = []
        if index % 3 == 0 { owners.insert(index % users.count) }
        if index % 10 == 0 { owners.insert((index / 10) % users.count) }
        return owners.sorted()
    }

    /// `count` books by the seven authors in turn, three without an author (alice's), five users.
    static func seed(at url: StoreURL, books count: Int) async throws {
        let v1 = try Scenario.version("Books", of: try models())
        try await Scenario.seed(v1, at: url) { context in
            var userObjects: [ManagedObject] = []
            for name in users {
                let user = try context.insertObject(entityName: "User")
                user.setValue(.string(name), forKey: "name")
                userObjects.append(user)
            }
            for index in 0..<count {
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string(title(index)), forKey: "title")
                book.setValue(.string(authors[index % authors.count]), forKey: "authorName")
                for owner in owners(index) { book.addDestination(userObjects[owner], forKey: "users") }
            }
            for name in anonymous {
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string(name), forKey: "title")
                userObjects[0].addDestination(book, forKey: "books")
            }
        }
    }

    /// The titles each user owns after seeding `count` books.
    static func expectedTitles(ofUser user: Int, books count: Int) -> [String] {
        ((0..<count).filter { owners($0).contains(user) }.map(title) + (user == 0 ? anonymous : [])).sorted()
    }

    static func expectedTitles(ofAuthor author: Int, books count: Int) -> [String] {
        (0..<count).filter { $0 % authors.count == author }.map(title)
    }

    // MARK: Mapping models

    /// `Mappings/Books1To2.json` and `Mappings/Books2To3.json`.
    static func mappingModels(_ models: VersionedModel) throws -> [MappingModel] {
        try Scenario.mappingModels("CustomMigrations", versions: models)
    }

    /// Books 2 → Books 3 as two mapping models, `SplitMappings/Books2To3Part1.json` (users
    /// and authors) and `Part2` (books and files), each loaded by itself: neither looks up
    /// the other's entity mappings.
    static func splitMappingModels(_ models: VersionedModel) throws -> [MappingModel] {
        let folder = Scenario.fixtures.appendingPathComponent("CustomMigrations/SplitMappings")
        return try ["Books2To3Part1", "Books2To3Part2"].map {
            try MappingModel(contentsOf: folder.appendingPathComponent("\($0).json"), versions: models)
        }
    }

    /// The mapping named `name` of `mappings`.
    static func mapping(_ name: String, in mappings: [MappingModel]) throws -> MappingModel {
        try #require(mappings.first { $0.name == name })
    }

    static var policies: MigrationPolicies {
        var policies = MigrationPolicies()
        policies.register(BookToBookAuthorPolicy.self)
        policies.register(BookToBookFilePolicy.self)
        policies.register(BookToBookSecondPassPolicy.self)
        return policies
    }

    static func chain(
        _ mappingModels: (VersionedModel) throws -> [MappingModel] = mappingModels,
        policies: MigrationPolicies = policies
    ) throws -> MigrationChain {
        let models = try models()
        return try MigrationChain(BooksVersion.self, models: models, mappingModels: try mappingModels(models), policies: policies)
    }

    // MARK: Checking a Books 2 store

    /// Expects the Books 2 store at `url`, made from `count` seeded books, to hold one
    /// `Author` per name with that name's books, and the users' books carried over.
    static func expectBooks2(at url: StoreURL, books count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let context = try await Scenario.open(try Scenario.version("Books 2", of: try models()), at: url)
        #expect(try await Scenario.count("Book", in: context) == count + anonymous.count, sourceLocation: sourceLocation)
        #expect(
            Scenario.strings(try await Scenario.all("Author", in: context), "name") == authors.sorted(),
            "one Author per name",
            sourceLocation: sourceLocation
        )
        for (index, name) in authors.enumerated() {
            let author = try await Scenario.one("Author", "name", name, in: context, sourceLocation: sourceLocation)
            let titles = Scenario.strings(try await author.destinations(forKey: "books"), "title")
            #expect(titles == expectedTitles(ofAuthor: index, books: count), "the books of \(name)", sourceLocation: sourceLocation)
        }
        #expect(try await Scenario.count("Book", in: context, where: "authors.@count == 1") == count, sourceLocation: sourceLocation)
        #expect(try await Scenario.count("Book", in: context, where: "authors.@count == 0") == anonymous.count, sourceLocation: sourceLocation)

        // One book from each side, and the users' many-to-many carried over.
        let book = try await Scenario.one("Book", "title", "Book 1234", in: context, sourceLocation: sourceLocation)
        #expect(
            Scenario.strings(try await book.destinations(forKey: "authors"), "name") == [authors[1234 % authors.count]],
            sourceLocation: sourceLocation
        )
        #expect(
            Scenario.strings(try await book.destinations(forKey: "users"), "name") == owners(1234).map { users[$0] },
            sourceLocation: sourceLocation
        )
        for (index, name) in users.enumerated() {
            let user = try await Scenario.one("User", "name", name, in: context, sourceLocation: sourceLocation)
            #expect(
                Scenario.strings(try await user.destinations(forKey: "books"), "title") == expectedTitles(ofUser: index, books: count),
                sourceLocation: sourceLocation
            )
        }
    }

    // MARK: Checking a Books 3 store

    /// What a Books 3 store holds, read through a context in both directions of each relationship.
    struct Summary: Equatable {
        /// Author name → titles, sorted.
        var authors: [String: [String]] = [:]
        /// User name → titles of the user's files, sorted.
        var users: [String: [String]] = [:]
        /// "user|title" of every file, sorted.
        var files: [String] = []
        var books = 0
        var booksWithOneAuthor = 0
    }

    static func summary(of url: StoreURL) async throws -> Summary {
        let v3 = try Scenario.version("Books 3", of: try models())
        let context = try await Scenario.open(v3, at: url)
        var summary = Summary()
        for author in try await Scenario.all("Author", in: context) {
            summary.authors[author.value(forKey: "name").stringValue ?? "?"] = Scenario.strings(
                try await author.destinations(forKey: "books"),
                "title"
            )
        }
        for file in try await Scenario.all("File", in: context) {
            let user = try #require(try await file.destination(forKey: "user"))
            let book = try #require(try await file.destination(forKey: "book"))
            #expect(try await book.destinations(forKey: "files").contains(file), "a file is among its book's files")
            summary.files.append("\(user.value(forKey: "name").stringValue ?? "?")|\(book.value(forKey: "title").stringValue ?? "?")")
        }
        summary.files.sort()
        for user in try await Scenario.all("User", in: context) {
            var titles: [String] = []
            for file in try await user.destinations(forKey: "files") {
                #expect(try await file.destination(forKey: "user") == user)
                titles.append(try await file.destination(forKey: "book")?.value(forKey: "title").stringValue ?? "?")
            }
            summary.users[user.value(forKey: "name").stringValue ?? "?"] = titles.sorted()
        }
        summary.books = try await Scenario.count("Book", in: context)
        summary.booksWithOneAuthor = try await Scenario.count("Book", in: context, where: "authors.@count == 1")
        return summary
    }

    /// The summary a Books 3 store made from `count` seeded books must have.
    static func expectedSummary(books count: Int) -> Summary {
        var summary = Summary()
        for author in authors.indices { summary.authors[authors[author]] = expectedTitles(ofAuthor: author, books: count) }
        for user in users.indices { summary.users[users[user]] = expectedTitles(ofUser: user, books: count) }
        summary.files = users.indices.flatMap { user in expectedTitles(ofUser: user, books: count).map { "\(users[user])|\($0)" } }.sorted()
        summary.books = count + anonymous.count
        summary.booksWithOneAuthor = count
        return summary
    }
}

@Suite struct CustomMigrationsScenarioTests {
    @Test(arguments: TestEngine.allCases)
    func authorNamesBecomeOneAuthorEachAcrossBatches(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let count = 2_500
            try await Books.seed(at: url, books: count)
            let chain = try Books.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url, to: "Books 2")
            #expect(plan.steps.map { $0.mappingModels.map(\.name) } == [["Books1To2"]])
            Scenario.checkProgress(progress, steps: 1)
            let created = progress.filter { $0.entityMapping == "BookToBook" && $0.stage == .createInstances }.map(\.instancesDone)
            #expect(created == [1_000, 2_000, count + Books.anonymous.count], "the books are migrated in three batches")
            try await expectNoLeftovers(url)

            try await Books.expectBooks2(at: url, books: count)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func filesComeBetweenUsersAndBooksWhenUserToUserRunsFirst(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let count = 1_200
            try await Books.seed(at: url, books: count)
            let chain = try Books.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url)
            #expect(plan.steps.map { $0.mappingModels.map(\.name) } == [["Books1To2"], ["Books2To3"]])
            #expect(plan.steps[1].mappingModels[0].entityMappings.map(\.name) == ["UserToUser", "AuthorToAuthor", "BookToBook"])
            Scenario.checkProgress(progress, steps: 2)
            try await expectNoLeftovers(url)

            let summary = try await Books.summary(of: url)
            let expected = Books.expectedSummary(books: count)
            #expect(summary.authors == expected.authors)
            #expect(summary.users == expected.users)
            #expect(summary.files == expected.files)
            #expect(summary.books == expected.books && summary.booksWithOneAuthor == expected.booksWithOneAuthor)
        }
    }

    /// Migrates 1 200 books with Books 2 → Books 3 as the two mapping models `passes` (given in
    /// reverse, run in the order `SplitBooksVersion` names them), and beside them with the one
    /// `Books2To3`; expects the same store, the one expected.
    func expectTwoPassesGiveTheStoreOfOne(_ passes: [MappingModel], models: VersionedModel, engine: TestEngine, batchSize: Int = 1_000) async throws {
        try await engine.withStoreURL { url in
            let count = 1_200
            // The same books in a second store beside the first (a schema of the same database on PostgreSQL).
            let split = url.sibling("split")
            try await Books.seed(at: url, books: count)
            try await Books.seed(at: split, books: count)

            let chain = try MigrationChain(
                SplitBooksVersion.self,
                models: models,
                mappingModels: [try Books.mapping("Books1To2", in: try Books.mappingModels(models))] + passes.reversed(),
                policies: Books.policies
            )
            let (plan, progress) = try await Scenario.migrate(chain, store: split, batchSize: batchSize)
            #expect(plan.steps.map { $0.mappingModels.map(\.name) } == [["Books1To2"], ["Books2To3Part1", "Books2To3Part2"]])
            Scenario.checkProgress(progress, steps: 2)

            _ = try await Scenario.migrate(try Books.chain(), store: url)
            try await expectNoLeftovers(url)
            try await expectNoLeftovers(split)
            let one = try await Books.summary(of: url)
            let two = try await Books.summary(of: split)
            #expect(one == two)
            #expect(two == Books.expectedSummary(books: count))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func theStepSplitIntoTwoMappingModelsGivesTheSameStore(engine: TestEngine) async throws {
        let models = try Books.models()
        try await expectTwoPassesGiveTheStoreOfOne(try Books.splitMappingModels(models), models: models, engine: engine)
    }

    /// `PassLookupMappings/`: Books2To3Part2 sets a book's authors with
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:…", "AuthorToAuthor", …)`, and its policy
    /// looks up `UserToUser`'s instances: both entity mappings are Books2To3Part1's.
    @Test(arguments: TestEngine.allCases)
    func aLaterMappingModelLooksUpWhatAnEarlierOneOfItsStepMade(engine: TestEngine) async throws {
        let models = try Books.models()
        let folder = Scenario.fixtures.appendingPathComponent("CustomMigrations/PassLookupMappings")
        let passes = try MappingModel.load(directory: folder, versions: models)
        #expect(passes.map(\.name) == ["Books2To3Part1", "Books2To3Part2"])
        // A batch far smaller than the store: the look-ups find pairs saved many batches before.
        try await expectTwoPassesGiveTheStoreOfOne(passes, models: models, engine: engine, batchSize: 7)
    }

    @Test(arguments: TestEngine.allCases)
    func bookToBookBeforeUserToUserFailsAndLeavesTheStoreAsItWas(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await Books.seed(at: url, books: 40)
            _ = try await Scenario.migrate(try Books.chain(), store: url, to: "Books 2")
            let before = try await StoreSnapshot(url)

            // Books2To3.json with its entity mappings in another order: BookToBook first.
            let chain = try Books.chain { models in
                var mapping = try Books.mapping("Books2To3", in: try Books.mappingModels(models))
                let byName = Dictionary(uniqueKeysWithValues: mapping.entityMappings.map { ($0.name, $0) })
                mapping.entityMappings = ["BookToBook", "UserToUser", "AuthorToAuthor"].compactMap { byName[$0] }
                #expect(mapping.entityMappings.count == 3)
                // The checker cannot see what a policy looks up: the order is accepted.
                try mapping.check(source: try Scenario.version("Books 2", of: models), destination: try Scenario.version("Books 3", of: models))
                return [mapping]
            }
            let error = await #expect(throws: MigrationError.self) {
                _ = try await Scenario.migrate(chain, store: url)
            }
            #expect((error?.underlying as? ScenarioPolicyError)?.description.contains("UserToUser must come before BookToBook") == true)
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aPolicyFailingInTheSecondBatchLeavesTheStoreAsItWas(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await Books.seed(at: url, books: 2_500)
            let before = try await StoreSnapshot(url)

            var policies = Books.policies
            policies.register(FailingBookToBookAuthorPolicy.self, as: "BookToBookAuthorPolicy")
            let chain = try Books.chain(policies: policies)
            let error = await #expect(throws: MigrationError.self) {
                _ = try await Scenario.migrate(chain, store: url)
            }
            #expect((error?.underlying as? ScenarioPolicyError)?.description == "book 1700 fails")
            try await expectUnchanged(url, since: before)
        }
    }

    @Test func theChainNotTheFileNamesOrdersAStepsMappingModels() throws {
        let models = try Books.models()
        let (v2, v3) = (try Scenario.version("Books 2", of: models), try Scenario.version("Books 3", of: models))
        let split = try Books.splitMappingModels(models)
        let whole = try Books.mapping("Books2To3", in: try Books.mappingModels(models))

        // Without names, the order the chain was given them, though "Part1" sorts first.
        let given = MigrationChain(models: models, mappingModels: split.reversed())
        #expect(try given.mappingModels(from: v2, to: v3).map(\.name) == ["Books2To3Part2", "Books2To3Part1"])
        // Named by the version: that order, whatever the chain was given.
        let named = try MigrationChain(SplitBooksVersion.self, models: models, mappingModels: split.reversed())
        #expect(try named.mappingModels(from: v2, to: v3).map(\.name) == ["Books2To3Part1", "Books2To3Part2"])

        // A name no mapping model has, and a mapping model the names leave out, are refused.
        let misnamed = try MigrationChain(MisnamedBooksVersion.self, models: models, mappingModels: split)
        let missing = #expect(throws: MigrationError.self) { try misnamed.mappingModels(from: v2, to: v3) }
        #expect(missing?.code == .invalidMappingModel)
        #expect(missing?.message.contains("'Books2To3Part3'") == true && missing?.hint?.contains("Books2To3Part1, Books2To3Part2") == true)
        let extra = try MigrationChain(SplitBooksVersion.self, models: models, mappingModels: split + [whole])
        let leftOut = #expect(throws: MigrationError.self) { try extra.mappingModels(from: v2, to: v3) }
        #expect(leftOut?.message.contains("'Books2To3' maps the step Books 2 → Books 3") == true)
    }

    /// Where a look-up into another mapping model of the step is checked: not in a file read
    /// alone, but in a folder's files read together, and in the order the chain runs them.
    @Test func lookUpsIntoAnotherMappingModelOfTheStepAreCheckedInTheStepsOrder() throws {
        let models = try Books.models()
        let (v1, v2, v3) = (
            try Scenario.version("Books", of: models), try Scenario.version("Books 2", of: models), try Scenario.version("Books 3", of: models)
        )
        let folder = Scenario.fixtures.appendingPathComponent("CustomMigrations/PassLookupMappings")
        let (part1, part2) = (folder.appendingPathComponent("Books2To3Part1.json"), folder.appendingPathComponent("Books2To3Part2.json"))

        // Alone, Part2 names a mapping it does not have, and says how to load it with its step.
        let alone = #expect(throws: MigrationError.self) { try MappingModel(contentsOf: part2, versions: models) }
        #expect(alone?.code == .invalidMappingModel && alone?.entityMapping == "BookToBook" && alone?.property == "authors")
        #expect(
            alone?.message.contains("names the entity mapping 'AuthorToAuthor', which this mapping model does not have") == true,
            "\(String(describing: alone))"
        )
        #expect(alone?.hint?.contains("MappingModel.load(directory:)") == true)

        // Read together, the two files load; a name neither has is still refused, in the file that uses it.
        let (loaded, problems) = MappingModel.read(filesAt: [part1, part2], versions: models)
        #expect(loaded.map(\.name) == ["Books2To3Part1", "Books2To3Part2"] && problems.isEmpty, "\(problems)")
        let typo = try ModelFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: typo) }
        try FileManager.default.copyItem(at: part1, to: typo.appendingPathComponent("Books2To3Part1.json"))
        let misspelt = try String(contentsOf: part2, encoding: .utf8).replacingOccurrences(of: #"\"AuthorToAuthor\""#, with: #"\"AuthorsToAuthors\""#)
        try misspelt.write(to: typo.appendingPathComponent("Books2To3Part2.json"), atomically: true, encoding: .utf8)
        let unknown = #expect(throws: MigrationError.self) { try MappingModel.load(directory: typo, versions: models) }
        #expect(unknown?.file?.hasSuffix("Books2To3Part2.json") == true && unknown?.property == "authors")
        #expect(
            unknown?.message.contains("'AuthorsToAuthors', which neither this mapping model nor another mapping model of the step has") == true,
            "\(String(describing: unknown))"
        )
        #expect(unknown?.hint?.contains("UserToUser, AuthorToAuthor") == true)

        // The chain's order decides: Part2 before Part1 is refused when the step is planned.
        let books1To2 = try Books.mapping("Books1To2", in: try Books.mappingModels(models))
        let reversed = MigrationChain(models: models, mappingModels: [books1To2] + loaded.reversed(), policies: Books.policies)
        let migrator = ProgressiveMigrator(chain: reversed, logger: Scenario.logger)
        let early = #expect(throws: MigrationError.self) { try migrator.plan(from: v1, store: .sqlite("/nonexistent.sqlite")) }
        #expect(
            early?.message.contains("'AuthorToAuthor', which neither this mapping model nor an earlier mapping model of the step has") == true,
            "\(String(describing: early))"
        )
        #expect(early?.hint?.contains("run the mapping model that has 'AuthorToAuthor' before this one") == true)
        let inOrder = ProgressiveMigrator(
            chain: MigrationChain(models: models, mappingModels: [books1To2] + loaded, policies: Books.policies),
            logger: Scenario.logger
        )
        #expect(try inOrder.plan(from: v1, store: .sqlite("/nonexistent.sqlite")).steps.count == 2)

        // Entity mapping names are the step's: a second BookToBook in a later pass is refused.
        let again = try Books.mapping("Books2To3", in: try Books.mappingModels(models))
        let twice = #expect(throws: MigrationError.self) { try again.check(source: v2, destination: v3, after: loaded) }
        #expect(twice?.message.contains("the entity mapping 'UserToUser' has the name of one in") == true, "\(String(describing: twice))")
    }
}
