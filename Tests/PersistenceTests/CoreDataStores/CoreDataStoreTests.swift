import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Stores written by Apple's Core Data on iOS: their version is recognised from their
/// tables, they open and read with our models, and they migrate to the example's version 4.
///
/// Serialized: each migration streams thousands of rows through a policy, and six at once
/// on a small machine would starve the tests that wait for a service to answer.
@Suite(.serialized) struct CoreDataStoreTests {
    @Test(arguments: CoreDataFixtures.stores)
    func versionIsRecognisedByCoreDataHashes(store: CoreDataFixtures.Store) async throws {
        try await CoreDataFixtures.withCopy(of: store) { url in
            let metadata = try await PersistentStore.metadata(at: url)
            #expect(metadata.isForeign)
            #expect(metadata.storeType == "SQLite")
            #expect(!metadata.storeUUID.isEmpty, "the store UUID comes from Z_UUID")
            let models = try CoreDataFixtures.models()
            // Apple's hashes are not ours, but the ones Core Data computes for the version.
            #expect(models.version(matching: metadata) == nil)
            let recognised = try await models.recogniseVersion(ofStoreAt: url)
            #expect(recognised.model.name == store.versionName)
            #expect(recognised.method == .coreDataVersionHashes)
            #expect(recognised.description == "\(store.versionName) (recognised by Core Data's version hashes)")

            // The migrator sees the same, and plans from there.
            let migrator = ProgressiveMigrator(chain: try CoreDataFixtures.chain(), logger: testLogger)
            let plan = try await migrator.plan(forStoreAt: url)
            #expect(plan.storeVersion.name == store.versionName)
            #expect(plan.steps.map(\.destination.name) == Array(CoreDataFixtures.versionNames.dropFirst(store.number)))
        }
    }

    @Test func storeOneReadsWithVersionOne() async throws {
        let store = CoreDataFixtures.stores[0]
        try await CoreDataFixtures.withCopy(of: store) { url in
            let v1 = try #require(try CoreDataFixtures.models().version(named: store.versionName))
            let (greatest, count) = try await withOpenStore(url, model: v1) { container in
                let context = container.newContext()
                let request = FetchRequest(
                    entityName: "Post",
                    sortDescriptors: [FetchRequest.SortDescriptor(key: "postID", ascending: false)],
                    fetchLimit: 1
                )
                return (try #require(try await context.fetch(request).first), try await Scenario.count("Post", in: context))
            }
            #expect(count == store.posts)
            #expect(greatest.value(forKey: "postID") == "FFC75007-7B10-44B5-8B3D-C13FF9E47BAD")
            #expect(greatest.value(forKey: "color") == "259EB7")
            // TIMESTAMP columns hold seconds since 2001-01-01.
            let date = try #require(CoreDataFixtures.date(greatest.value(forKey: "date")))
            #expect(abs(date.timeIntervalSinceReferenceDate - 526_914_238.419883) < 0.000_001)
        }
    }

    @Test func savingHonoursCoreDataPrimaryKeysAndOptimisticLocking() async throws {
        let store = CoreDataFixtures.stores[0]
        try await CoreDataFixtures.withCopy(of: store) { url in
            let v1 = try #require(try CoreDataFixtures.models().version(named: store.versionName))
            let before = try await storeRows(url, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Post'")
            let entity = try #require(before.first?[0].int64)
            let max = try #require(before.first?[1].int64)
            #expect(max >= Int64(store.posts))
            try await withOpenStore(url, model: v1) { container in
                let context = container.newContext()
                let post = try context.insertObject(entityName: "Post")
                post.setValue("NEW-POST", forKey: "postID")
                let old = try await Scenario.one("Post", "postID", "FFC75007-7B10-44B5-8B3D-C13FF9E47BAD", in: context)
                old.setValue("000000", forKey: "color")
                try await context.save()
            }
            // The new row takes the key after Apple's Z_MAX and Apple's entity number; the
            // changed row's Z_OPT goes up from Core Data's 1.
            let added = try await storeRows(url, "SELECT Z_PK, Z_ENT, Z_OPT FROM ZPOST WHERE ZPOSTID = 'NEW-POST'")
            #expect(added.map { $0.map(\.int64) } == [[max + 1, entity, 1]])
            #expect(try await storeRows(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Post'").first?.first?.int64 == max + 1)
            let changed = try await storeRows(url, "SELECT Z_OPT, ZCOLOR FROM ZPOST WHERE ZPOSTID = 'FFC75007-7B10-44B5-8B3D-C13FF9E47BAD'")
            #expect(changed.first?[0].int64 == 2)
            #expect(changed.first?[1].text == "000000")
        }
    }

    @Test func openingWithAnotherVersionIsRefusedNamingTheDifferences() async throws {
        let store = CoreDataFixtures.stores[0]
        try await CoreDataFixtures.withCopy(of: store) { url in
            let v2 = try #require(try CoreDataFixtures.models().version(named: "CoreDataMigration_Example 2"))
            let error = await #expect(throws: StoreError.self) { try await PersistentStore.open(url, model: v2, logger: testLogger) }
            #expect(error?.code == .incompatibleModel)
            #expect(error?.message.contains("ZPOST has a column ZCOLOR (text) the model does not have") == true)
            #expect(error?.message.contains("ZPOST lacks the column ZHEXCOLOR (text)") == true)
        }
    }

    @Test(arguments: TestEngine.allCases, CoreDataFixtures.stores)
    func storeMigratesToVersion4(engine: TestEngine, store: CoreDataFixtures.Store) async throws {
        try await CoreDataFixtures.withCopy(of: store) { copy in
            let chain = try CoreDataFixtures.chain()
            let original = try await PersistentStore.metadata(at: copy)
            try await engine.withStoreURL { url in
                switch engine {
                case .sqlite:
                    try FileManager.default.copyItem(atPath: try #require(copy.filePath), toPath: try #require(url.filePath))
                case .postgres:
                    // Copied by recognition into PostgreSQL, in our schema with our metadata.
                    let summary = try await StoreCopy.copy(from: copy, to: url, versions: chain.models, logger: testLogger)
                    #expect(summary.modelVersion == store.versionName)
                    #expect(summary.rows["ZPOST"] == store.posts)
                    let copied = try await PersistentStore.metadata(at: url)
                    #expect(!copied.isForeign && copied.storeUUID == original.storeUUID)
                }
                let (plan, progress) = try await Scenario.migrate(chain, store: url)
                #expect(plan.storeVersion.name == store.versionName)
                #expect(plan.steps.map(\.destination.name) == Array(CoreDataFixtures.versionNames.dropFirst(store.number)))
                Scenario.checkProgress(progress, steps: plan.steps.count)
                try await expectNoLeftovers(url)
                try await expectVersion4(url, store: store, original: original, models: chain.models)
            }
        }
    }

    /// What every migrated store holds: the posts with their values, one new colour per
    /// post and the other way round, `hide` NO everywhere, and our metadata.
    private func expectVersion4(_ url: StoreURL, store: CoreDataFixtures.Store, original: StoreMetadata, models: VersionedModel) async throws {
        let v4 = try #require(models.version(named: "CoreDataMigration_Example 4"))
        let metadata = try await PersistentStore.metadata(at: url)
        #expect(v4.isCompatible(with: metadata), "the store carries our hashes")
        #expect(metadata.modelVersionName == v4.name)
        #expect(metadata.versionIdentifiers == [v4.versionIdentifier])
        #expect(metadata.storeUUID == original.storeUUID)
        #expect(metadata.additional["NSPersistenceFrameworkVersion"] == nil)
        #expect(metadata.additional["_NSAutoVacuumLevel"] == nil)
        #expect(original.additional["NSPersistenceFrameworkVersion"] != nil, "Apple's store had the key to drop")
        #expect(try await storeRows(url, "SELECT count(*) FROM Z_MODELCACHE").first?.first?.int64 == 0, "no model cache describes an old model")

        let context = try await Scenario.open(v4, at: url)
        #expect(try await Scenario.count("Post", in: context) == store.posts)
        #expect(try await Scenario.count("Color", in: context) == store.posts)
        #expect(try await Scenario.count("Post", in: context, where: "hide == NO") == store.posts)
        #expect(try await Scenario.count("Post", in: context, where: "color == nil") == 0)
        #expect(try await Scenario.count("Color", in: context, where: "post == nil") == 0)

        let greatest = try #require(
            try await context.fetch(
                FetchRequest(entityName: "Post", sortDescriptors: [FetchRequest.SortDescriptor(key: "postID", ascending: false)], fetchLimit: 1)
            ).first
        )
        let colour = try #require(try await greatest.destination(forKey: "color"))
        #expect(try await colour.destination(forKey: "post") == greatest)
        switch store.number {
        case 1:
            #expect(greatest.value(forKey: "postID") == "FFC75007-7B10-44B5-8B3D-C13FF9E47BAD")
            #expect(colour.value(forKey: "hex") == "259EB7")
            let date = try #require(CoreDataFixtures.date(greatest.value(forKey: "date")))
            #expect(abs(date.timeIntervalSinceReferenceDate - 526_914_238.419883) < 0.000_001)
        case 2:
            #expect(greatest.value(forKey: "postID") == "FFFF32E3-2643-4FA1-9CB7-9DB4EAE088ED")
            #expect(colour.value(forKey: "hex") == "511ADB")
        default:
            #expect(colour.value(forKey: "hex").stringValue?.count == 6)
        }

        // Both foreign keys, row by row: each post and its colour point at each other, once.
        let pairs = try await storeRows(
            url,
            "SELECT ZPOST.Z_PK, ZPOST.ZCOLOR, ZCOLOR.Z_PK, ZCOLOR.ZPOST, ZCOLOR.ZCOLORID, ZCOLOR.ZHEX FROM ZPOST LEFT JOIN ZCOLOR ON ZCOLOR.Z_PK = ZPOST.ZCOLOR"
        )
        #expect(pairs.count == store.posts)
        #expect(pairs.allSatisfy { $0[2] == $0[1] && $0[3] == $0[0] }, "a post and its colour do not point at each other")
        #expect(Set(pairs.map { $0[1] }).count == store.posts, "a colour is shared by several posts")
        let ids = pairs.compactMap { $0[4].text }
        #expect(ids.count == store.posts && ids.allSatisfy { UUID(uuidString: $0) != nil }, "colorIDs are not all UUID strings")
        #expect(Set(ids).count == store.posts, "colorIDs are not unique")
        #expect(pairs.allSatisfy { $0[5].text?.count == 6 }, "a colour has no six-digit hex")
    }
}
