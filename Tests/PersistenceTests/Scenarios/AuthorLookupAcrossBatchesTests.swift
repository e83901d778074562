import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

// "Custom Core Data Migrations" ported the three ways a Core Data developer writes its
// "one Author per name" look-up, none of them saving in the policy: the authors made so far
// kept as objects in the manager's `userInfo`, kept as their (temporary) object IDs, or
// fetched by name from the destination context. Each must give one author per name however
// many batches the books take, which needs the objects and IDs of a saved batch to stay
// valid and fetches to see the batch's unsaved authors.

/// Keeps the authors made so far as objects, by name, and links each book from the
/// author's side (`books`), as the article's policy does.
class AuthorObjectsLookupPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        guard let name = source.value(forKey: "authorName").stringValue else { return }
        let books = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        guard let book = books.first else { throw ScenarioPolicyError("\(source.objectID) has no destination book") }
        try await author(named: name, manager: manager).addDestination(book, forKey: "books")
    }

    func author(named name: String, manager: MigrationManager) async throws -> ManagedObject {
        try manager.userInfo.withValues { values in
            var authors = values["authors"] as? [String: ManagedObject] ?? [:]
            if let author = authors[name] { return author }
            let author = try manager.destinationContext.insertObject(entityName: "Author")
            author.setValue(.string(name), forKey: "name")
            authors[name] = author
            values["authors"] = authors
            return author
        }
    }
}

/// Keeps each author's object ID, taken while it is still temporary, and resolves it again.
final class AuthorObjectIDsLookupPolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override func author(named name: String, manager: MigrationManager) async throws -> ManagedObject {
        let context = manager.destinationContext
        if let id = manager.userInfo["author:\(name)"] as? ObjectID {
            return try await context.existingObject(with: id)
        }
        let author = try context.insertObject(entityName: "Author")
        author.setValue(.string(name), forKey: "name")
        manager.userInfo["author:\(name)"] = author.objectID
        return author
    }
}

/// Keeps nothing: fetches the author by name from the destination context, which must see
/// the authors its batch inserted and has not saved yet.
final class AuthorFetchLookupPolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override func author(named name: String, manager: MigrationManager) async throws -> ManagedObject {
        let context = manager.destinationContext
        let found = try await context.fetch(FetchRequest(entityName: "Author", predicate: try Predicate(format: "name == %@", .string(name))))
        guard found.count <= 1 else { throw ScenarioPolicyError("\(found.count) authors are named \(name)") }
        if let author = found.first { return author }
        let author = try context.insertObject(entityName: "Author")
        author.setValue(.string(name), forKey: "name")
        return author
    }
}

@Suite struct AuthorLookupAcrossBatchesTests {
    enum Lookup: String, CaseIterable, CustomTestStringConvertible {
        case objects, objectIDs, fetch
        var testDescription: String { rawValue }

        var policy: AuthorObjectsLookupPolicy.Type {
            switch self {
            case .objects: AuthorObjectsLookupPolicy.self
            case .objectIDs: AuthorObjectIDsLookupPolicy.self
            case .fetch: AuthorFetchLookupPolicy.self
            }
        }
    }

    /// Each look-up at a batch size of 1 and of 1 000, on every engine.
    static let cases = TestEngine.allCases.flatMap { engine in
        [1, 1_000].flatMap { batchSize in Lookup.allCases.map { (engine, batchSize, $0) } }
    }

    @Test(arguments: cases)
    func oneAuthorPerNameOnAStoreManyTimesABatch(engine: TestEngine, batchSize: Int, lookup: Lookup) async throws {
        try await engine.withStoreURL { url in
            let count = 2_500
            try await Books.seed(at: url, books: count)
            var policies = Books.policies
            policies.register(lookup.policy, as: "BookToBookAuthorPolicy")

            let (_, progress) = try await Scenario.migrate(try Books.chain(policies: policies), store: url, to: "Books 2", batchSize: batchSize)
            let batches = progress.filter { $0.entityMapping == "BookToBook" && $0.stage == .createInstances }.count
            #expect(batches == (count + Books.anonymous.count + batchSize - 1) / batchSize, "the books take many batches")
            try await Books.expectBooks2(at: url, books: count)
        }
    }
}

/// Passes the default `createDestinationInstances` a changed copy of its mapping for every
/// other book (the title set to a constant): the default follows the mapping it is given,
/// not the one it was first given in the run.
final class AlternatingTitlePolicy: AuthorObjectsLookupPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        var given = mapping
        if (source.objectID.primaryKey ?? 0) % 2 == 1 {
            given.attributeMappings = [PropertyMapping(name: "title", valueExpression: try Expression(format: #""Untitled""#))]
        }
        try await super.createDestinationInstances(forSource: source, in: given, manager: manager)
    }
}

@Suite struct ChangedMappingTests {
    @Test(arguments: TestEngine.allCases)
    func theDefaultCreationFollowsTheMappingItIsGiven(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let count = 300
            try await Books.seed(at: url, books: count)
            var policies = Books.policies
            policies.register(AlternatingTitlePolicy.self, as: "BookToBookAuthorPolicy")
            _ = try await Scenario.migrate(try Books.chain(policies: policies), store: url, to: "Books 2", batchSize: 100)
            let context = try await Scenario.open(try Scenario.version("Books 2", of: try Books.models()), at: url)
            let books = count + Books.anonymous.count
            #expect(try await Scenario.count("Book", in: context) == books)
            #expect(
                try await Scenario.count("Book", in: context, where: "title == %@", .string("Untitled")) == (books + 1) / 2,
                "every odd-keyed book, and only those, took the changed mapping's title"
            )
        }
    }
}
