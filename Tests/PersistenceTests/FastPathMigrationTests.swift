import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A manager whose association hook needs no instance: its step streams, and within it every
/// entity mapping that can runs as SQL and every look-up relationship as key arithmetic.
final class FastPathManager: MigrationManager, @unchecked Sendable {
    override func needsAssociationCalls(for mapping: EntityMapping) -> Bool { false }
}

/// A policy that changes nothing but, declaring nothing, counts as overriding every
/// per-instance hook: its mapping's instances and relationships go one at a time.
final class PerInstancePolicy: EntityMigrationPolicy, @unchecked Sendable {}

enum FastPathLibraryVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Library"
    case v2 = "Library 2"
    var modelName: String { rawValue }
    func nextVersion() -> FastPathLibraryVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? FastPathManager.self : MigrationManager.self }
}

/// Each fast path of a streamed step gives, row for row, the store that running every hook
/// for every instance gives: SQL instances, identity keys, foreign keys written with the
/// instances, dangling ones cleared.
@Suite struct FastPathMigrationTests {
    /// How the step runs its entity mappings.
    enum Path: String, CaseIterable {
        /// SQL instances and key-arithmetic relationships wherever they apply.
        case sql
        /// Instances one by one through the manager's hook, relationships as key arithmetic.
        case keyArithmetic
        /// Every hook for every instance: the reference.
        case perInstance
    }

    static let v1 = Result { try LibraryModel.make() }
    static let v2 = Result {
        try ManagedObjectModel(
            name: "Library 2",
            versionIdentifier: "2",
            entities: try v1.get().entities.map { entity in
                var entity = entity
                entity.versionHashModifier = "2"
                return entity
            }
        )
    }

    /// Library 1 → 2 mapped entity by entity; with `filter`, only books priced above 5
    /// come across, so pages of the others must lose their book.
    func mapping(filter: Bool, perInstancePolicies: Bool) throws -> MappingModel {
        var mapping = try MappingModel.inferred(from: try Self.v1.get(), to: try Self.v2.get())
        mapping.isInferred = false
        mapping.name = "Library1To2"
        mapping.entityMappings = try mapping.entityMappings.map { entityMapping in
            var entityMapping = entityMapping
            if filter, entityMapping.sourceEntityName == "Book" { entityMapping.sourceFilter = try Predicate(format: "price > 5") }
            if perInstancePolicies, entityMapping.sourceEntityName != nil, entityMapping.destinationEntityName != nil {
                entityMapping.type = .custom
                entityMapping.policyName = "PerInstancePolicy"
            }
            return entityMapping
        }
        return mapping
    }

    /// Shelves, books with pages (some without), authors sharing books, portraits, tools and
    /// gadgets, with NULLs, empty strings and non-ASCII text; some rows deleted, so keys
    /// have gaps.
    func makeLibrary(at url: StoreURL, numbering: EntityNumbering? = nil) async throws {
        try await makeClosedStore(at: url, model: try Self.v1.get(), numbering: numbering) { try await fillLibrary($0) }
    }

    func fillLibrary(_ container: PersistentContainer) async throws {
        let context = container.newContext()
        var shelves: [ManagedObject] = []
        for label in ["fiction", "", "Ünïcødé"] {
            let shelf = try context.insertObject(entityName: "Shelf")
            shelf.setValue(label == "fiction" ? .string(label) : label.isEmpty ? .string("") : .string(label), forKey: "label")
            shelves.append(shelf)
        }
        let nullShelf = try context.insertObject(entityName: "Shelf")
        nullShelf.setValue(.null, forKey: "label")
        var books: [ManagedObject] = []
        let titles = ["Gödel, Escher, Bach", "", "日本語の本", "A", "B", "C", "D", "E"]
        for (index, title) in titles.enumerated() {
            let book = try context.insertObject(entityName: "Book")
            book.setValue(.string(title), forKey: "title")
            book.setValue(.double(Double(index) * 2.5), forKey: "price")
            book.setValue(index % 3 == 0 ? .null : index % 3 == 1 ? .string("") : .string("isbn-\(index)"), forKey: "isbn")
            if index < 6 { book.setDestination(shelves[index % 3], forKey: "shelf") }
            for number in 0..<(index % 4) {
                let page = try context.insertObject(entityName: "Page")
                page.setValue(.integer(Int64(number + 1)), forKey: "number")
                page.setValue(number == 0 ? .null : .string("Seite \(number) — «\(title)»"), forKey: "text")
                page.setDestination(book, forKey: "book")
            }
            books.append(book)
        }
        let orphan = try context.insertObject(entityName: "Page")
        orphan.setValue(.integer(9), forKey: "number")
        for name in ["Ann", "Bøb", "Zoë"] {
            let author = try context.insertObject(entityName: "Author")
            author.setValue(.string(name), forKey: "name")
            for (index, book) in books.enumerated() where (index + name.count) % 2 == 0 { author.addDestination(book, forKey: "books") }
            if name != "Zoë" {
                let portrait = try context.insertObject(entityName: "Portrait")
                portrait.setValue(.binary(Data(name.utf8)), forKey: "image")
                portrait.setDestination(author, forKey: "author")
            }
        }
        for (name, weight) in [("hammer", 1.5), ("", 0.25)] {
            let tool = try context.insertObject(entityName: "Tool")
            tool.setValue(.string(name), forKey: "name")
            tool.setValue(.double(weight), forKey: "weight")
        }
        let gadget = try context.insertObject(entityName: "Gadget")
        gadget.setValue(.null, forKey: "name")
        gadget.setValue(.integer(230), forKey: "voltage")
        try await context.save()
        // Gaps: a book (its pages go with it) and a page of another.
        context.delete(books[3])
        let pages = try await books[2].destinations(forKey: "pages")
        context.delete(pages[0])
        try await context.save()
    }

    func migrate(_ url: StoreURL, path: Path, filter: Bool) async throws -> MigrationPlan {
        var policies = MigrationPolicies()
        policies.register(PerInstancePolicy.self)
        let models = try VersionedModel(name: "Library", versions: [try Self.v1.get(), try Self.v2.get()], currentVersionName: "Library 2")
        let mapping = try mapping(filter: filter, perInstancePolicies: path == .perInstance)
        let chain =
            switch path {
            case .sql: try MigrationChain(FastPathLibraryVersion.self, models: models, mappingModels: [mapping], policies: policies)
            case .keyArithmetic, .perInstance:
                try MigrationChain(StreamedLibraryVersion.self, models: models, mappingModels: [mapping], policies: policies)
            }
        return try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
    }

    @Test(arguments: TestEngine.allCases, [false, true])
    func everyFastPathGivesTheStoreThatEveryHookGives(engine: TestEngine, filter: Bool) async throws {
        try await engine.withStoreURL { referenceURL in
            try await makeLibrary(at: referenceURL)
            let plan = try await migrate(referenceURL, path: .perInstance, filter: filter)
            #expect(plan.steps.map(\.strategy) == [.streamed])
            try await expectNoLeftovers(referenceURL)
            try await expectEveryIndex(referenceURL, of: try Self.v2.get())
            let schema = StoreSchema(model: try Self.v2.get(), dialect: referenceURL.testEngine.dialect)
            // Z_OPT counts saves, which differ between the paths; everything else must not.
            let queries =
                schema.rootTables.map { "SELECT Z_PK, Z_ENT, \($0.allColumns.map(\.name).joined(separator: ", ")) FROM \($0.name) ORDER BY 1" }
                + schema.allJoinTables.map { "SELECT * FROM \($0.name) ORDER BY 1, 2" }
            var reference: [String: [[DatabaseValue]]] = [:]
            for query in queries { reference[query] = try await storeRows(referenceURL, query) }
            #expect(reference.values.contains { !$0.isEmpty })

            for path in [Path.sql, .keyArithmetic] {
                let url = referenceURL.sibling("path_\(path.rawValue)")
                try await makeLibrary(at: url)
                _ = try await migrate(url, path: path, filter: filter)
                try await expectNoLeftovers(url)
                try await expectEveryIndex(url, of: try Self.v2.get())
                for query in queries {
                    #expect(try await storeRows(url, query) == reference[query], "\(path): \(query)")
                }
            }
            // A source numbered as earlier releases numbered it is read by its own
            // Z_PRIMARYKEY: every path gives the same store.
            let otherNumbering = try legacyNumbering(of: try Self.v1.get())
            for path in Path.allCases {
                let url = referenceURL.sibling("numbered_\(path.rawValue)")
                try await makeLibrary(at: url, numbering: otherNumbering)
                #expect(
                    try await storeRows(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tool'").first?.first?.int64
                        == Int64(otherNumbering.number(of: "Tool")!)
                )
                _ = try await migrate(url, path: path, filter: filter)
                try await expectNoLeftovers(url)
                for query in queries {
                    #expect(try await storeRows(url, query) == reference[query], "numbered otherwise, \(path): \(query)")
                }
            }
            if filter {
                // Pages of books priced 5 or less lost their book; no key names a missing row.
                let dangling = try await storeRows(
                    referenceURL,
                    "SELECT count(*) FROM ZPAGE p WHERE p.ZBOOK IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ZBOOK b WHERE b.Z_PK = p.ZBOOK)"
                )
                #expect(dangling == [[.integer(0)]])
                let bookless = try await storeRows(referenceURL, "SELECT count(*) FROM ZPAGE WHERE ZBOOK IS NULL")
                #expect((bookless.first?.first?.int64 ?? 0) > 1)
            }
        }
    }

    /// The plan of a step tells which entity mappings run as SQL and why the others do not.
    @Test func sqlInstancesNeedNoHookPerInstance() throws {
        let v1 = try Self.v1.get()
        let v2 = try Self.v2.get()
        let mapping = try mapping(filter: true, perInstancePolicies: false)
        let book = try #require(mapping.entityMappings.first { $0.sourceEntityName == "Book" })
        let page = try #require(mapping.entityMappings.first { $0.sourceEntityName == "Page" })
        let relationships = RelationshipStage.plan(page, in: mapping, source: v1, destination: v2, hooks: [])
        guard case .foreignKeys(let lookups) = relationships else {
            Issue.record("Page's book should be key arithmetic")
            return
        }
        #expect(lookups.map(\.relationship) == ["book"])
        guard
            case .sql = InstanceStage.plan(
                page,
                source: v1,
                destination: v2,
                dialect: .sqlite,
                hooks: [],
                associationCalls: false,
                relationships: relationships
            )
        else {
            Issue.record("PageToPage should run as SQL")
            return
        }
        guard
            case .perInstance(let reason) = InstanceStage.plan(
                book,
                source: v1,
                destination: v2,
                dialect: .sqlite,
                hooks: [],
                associationCalls: false,
                relationships: .foreignKeys([])
            )
        else {
            Issue.record("a filtered mapping should go instance by instance")
            return
        }
        #expect(reason.contains("filters"))
        guard
            case .perInstance(let hookReason) = InstanceStage.plan(
                page,
                source: v1,
                destination: v2,
                dialect: .sqlite,
                hooks: .all,
                associationCalls: false,
                relationships: relationships
            )
        else {
            Issue.record("a policy overriding the instance hook should go instance by instance")
            return
        }
        #expect(hookReason.contains("createDestinationInstances"))
    }
}
