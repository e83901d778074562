import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

enum ShelfVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Shelves"
    case v2 = "Shelves 2"
    case v3 = "Shelves 3"
    var modelName: String { rawValue }
    func nextVersion() -> ShelfVersion? {
        switch self {
        case .v1: .v2
        case .v2: .v3
        case .v3: nil
        }
    }
    /// Version 3 is reached through a custom manager: the step 2 → 3 streams.
    var migrationManagerType: MigrationManager.Type { self == .v3 ? StreamingManager.self : MigrationManager.self }
}

/// An in-place step that keeps the store's entity numbers for the streamed step after it
/// checks the rules it tightens on the rows as they are numbered. `Book` (1 in version 1,
/// `Shelf` 2) becomes `Volume`, whose title is required in version 2; a new version 2 store
/// would number `Shelf` 1, `Volume` 2, the kept numbering leaves `Volume` 1. Version 3 makes
/// the title optional again: a check that looked at the rows numbered 2 would find none of
/// the books and let the migration through.
@Suite struct KeptNumbersChecksTests {
    func versions() throws -> VersionedModel {
        let shelf = #"<entity name="Shelf"><attribute name="label" optional="YES" attributeType="String"/></entity>"#
        return try ShopModels.versioned([
            ShopModels.model(
                "Shelves",
                "1",
                #"<entity name="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"# + shelf
            ),
            ShopModels.model(
                "Shelves 2",
                "2",
                #"<entity name="Volume" elementID="Book"><attribute name="title" attributeType="String"/></entity>"# + shelf
            ),
            ShopModels.model(
                "Shelves 3",
                "3",
                #"<entity name="Volume" elementID="Book"><attribute name="title" optional="YES" attributeType="String"/></entity>"# + shelf
            ),
        ])
    }

    @Test(arguments: TestEngine.allCases)
    func aRequiredTitleIsCheckedOnTheRowsAsTheyAreNumbered(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let versions = try versions()
            try await makeClosedStore(at: url, model: versions.versions[0]) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Shelf").setValue("Top", forKey: "label")
                try context.insertObject(entityName: "Book").setValue("Named", forKey: "title")
                _ = try context.insertObject(entityName: "Book")
                try await context.save()
            }
            let before = try await StoreSnapshot(url)
            let migrator = ProgressiveMigrator(chain: try MigrationChain(ShelfVersion.self, models: versions), logger: testLogger)
            let plan = try migrator.plan(from: versions.versions[0], store: url)
            #expect(plan.steps.map(\.strategy) == [.inPlace, .streamed])
            #expect(plan.steps[0].keepsEntityNumbers)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(error?.code == .validationFailed, "\(error.map { "\($0)" } ?? "")")
            #expect(error?.description.contains("the rules of 'Shelves 2'") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(error?.description.contains("Volume/p2 title: missingValue") == true, "\(error.map { "\($0)" } ?? "")")
            try await expectUnchanged(url, since: before)
        }
    }
}

enum WriterVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Writers"
    case v2 = "Writers 2"
    case v3 = "Writers 3"
    case v4 = "Writers 4"
    var modelName: String { rawValue }
    func nextVersion() -> WriterVersion? {
        switch self {
        case .v1: .v2
        case .v2: .v3
        case .v3: .v4
        case .v4: nil
        }
    }
    /// Version 4 is reached through a custom manager: the step 3 → 4 streams.
    var migrationManagerType: MigrationManager.Type { self == .v4 ? StreamingManager.self : MigrationManager.self }
}

/// Two in-place steps before a streamed one: the first renames `Book.author` to `writer`,
/// the second drops `writer`. The first keeps the store's entity numbers, and leaves the
/// index of the renamed key under the name a new store gives it (`ZBOOK_ZWRITER_INDEX`,
/// renamed or built again), since the second is planned from that layout and drops it by
/// that name.
@Suite struct KeptNumbersIndexTests {
    func versions() throws -> VersionedModel {
        func person(_ inverses: String) -> String {
            #"<entity name="Person"><attribute name="name" optional="YES" attributeType="String"/>"# + inverses + "</entity>"
        }
        func toMany(_ name: String, _ inverse: String) -> String {
            #"<relationship name="\#(name)" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="\#(inverse)" inverseEntity="Book"/>"#
        }
        func toOne(_ name: String, _ inverse: String, _ extra: String = "") -> String {
            #"<relationship name="\#(name)" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="\#(inverse)" inverseEntity="Person"\#(extra)/>"#
        }
        let title = #"<attribute name="title" optional="YES" attributeType="String"/>"#
        let note = #"<attribute name="note" optional="YES" attributeType="String"/>"#
        return try ShopModels.versioned([
            ShopModels.model(
                "Writers",
                "1",
                person(toMany("books", "author")) + #"<entity name="Book">"# + title + toOne("author", "books") + "</entity>"
            ),
            ShopModels.model(
                "Writers 2",
                "2",
                person(toMany("books", "writer")) + #"<entity name="Book">"# + title + toOne("writer", "books", #" elementID="author""#) + "</entity>"
            ),
            ShopModels.model("Writers 3", "3", person("") + #"<entity name="Book">"# + title + "</entity>"),
            ShopModels.model("Writers 4", "4", person("") + #"<entity name="Book">"# + title + note + "</entity>"),
        ])
    }

    @Test(arguments: TestEngine.allCases)
    func aRenamedKeysIndexHasItsNewNameForTheNextInPlaceStep(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let versions = try versions()
            let written: [(title: String, author: String?)] = [("Émile", "Zola"), ("Nana", "Zola"), ("Anonyme", nil), ("Germinal", "Zola")]
            try await makeClosedStore(at: url, model: versions.versions[0]) { container in
                let context = container.newContext()
                let zola = try context.insertObject(entityName: "Person")
                zola.setValue("Zola", forKey: "name")
                for book in written {
                    let object = try context.insertObject(entityName: "Book")
                    object.setValue(.string(book.title), forKey: "title")
                    if book.author != nil { object.setDestination(zola, forKey: "author") }
                }
                try await context.save()
            }
            let migrator = ProgressiveMigrator(chain: try MigrationChain(WriterVersion.self, models: versions), logger: testLogger)
            let plan = try migrator.plan(from: versions.versions[0], store: url)
            #expect(plan.steps.map(\.strategy) == [.inPlace, .inPlace, .streamed])
            #expect(plan.steps.prefix(2).allSatisfy { $0.keepsEntityNumbers })
            try await migrator.migrateStore(at: url)
            try await expectNoLeftovers(url)
            let (titles, people) = try await withOpenStore(url, model: versions.current) { container in
                let context = container.newContext()
                let books = try await context.fetch(FetchRequest(entityName: "Book", sortDescriptors: [FetchRequest.SortDescriptor(key: "title")]))
                let people = try await context.fetch(FetchRequest(entityName: "Person"))
                return (books.map { $0.value(forKey: "title").stringValue ?? "?" }, people.map { $0.value(forKey: "name").stringValue ?? "?" })
            }
            #expect(titles == written.map(\.title).sorted())
            #expect(people == ["Zola"])
        }
    }
}
