import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

// Colourful Posts, from William Boles' "Progressive Core Data Migrations":
// 1 → 2 renames `color` to `hexColor` (renaming identifier, inferred);
// 2 → 3 splits `Post` into `Post` + `Section` through a custom policy;
// 3 → 4 adds `softDeleted`, a required Boolean defaulting to NO (inferred).

enum ColourfulPostsVersion: String, MigrationVersion, CaseIterable {
    case v1 = "ColourfulPosts"
    case v2 = "ColourfulPosts 2"
    case v3 = "ColourfulPosts 3"
    case v4 = "ColourfulPosts 4"

    var modelName: String { rawValue }

    func nextVersion() -> ColourfulPostsVersion? {
        switch self {
        case .v1: .v2
        case .v2: .v3
        case .v3: .v4
        case .v4: nil
        }
    }
}

/// Version 3's split: the post keeps its ID, date and colour (the mapping's attribute
/// mappings, run by `super`); its content becomes its first section, titled with the
/// content's first four characters and "...".
class PostToPostMigrationPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let posts = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        guard let post = posts.first else { throw ScenarioPolicyError("the post \(source.objectID) has no destination") }
        let content = source.value(forKey: "content").stringValue
        let section = try manager.destinationContext.insertObject(entityName: "Section")
        section.setValue(.string(String((content ?? "").prefix(4)) + "..."), forKey: "title")
        section.setValue(content.map(AttributeValue.string) ?? .null, forKey: "body")
        section.setValue(0, forKey: "index")
        section.setDestination(post, forKey: "post")
    }
}

/// The same split, failing at the thirteenth post: a policy bug found halfway through a store.
final class FailingPostToPostMigrationPolicy: PostToPostMigrationPolicy, @unchecked Sendable {
    private var posts = 0

    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        posts += 1
        if posts == 13 { throw ScenarioPolicyError("the post \(source.value(forKey: "postID").stringValue ?? "") cannot be split") }
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }
}

enum ColourfulPosts {
    static func models() throws -> VersionedModel { try Scenario.models("ColourfulPosts", "ColourfulPosts") }

    /// The policy is registered under the name `Mappings/ColourfulPosts2To3.json` gives it.
    static func chain(policy: EntityMigrationPolicy.Type = PostToPostMigrationPolicy.self) throws -> MigrationChain {
        let models = try models()
        var policies = MigrationPolicies()
        policies.register(policy, as: "PostToPostMigrationPolicy")
        return try MigrationChain(
            ColourfulPostsVersion.self,
            models: models,
            mappingModels: try Scenario.mappingModels("ColourfulPosts", versions: models),
            policies: policies
        )
    }

    static let colours = ["259EB7", "511ADB", "E23F3F", "47B36B", "F2A30F"]
    static let texts = [
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
        "Progressive migrations take a store through every version it missed.",
        "Hi",
        "Colourful posts need colourful sections.",
    ]
    static let firstDate = Date(timeIntervalSinceReferenceDate: 526_914_238.419883)
    static let postCount = 30

    static func postID(_ index: Int) -> String { String(format: "POST-%04d", index) }

    /// Thirty posts at version 1, an hour apart.
    static func seed(at url: StoreURL) async throws {
        let v1 = try Scenario.version("ColourfulPosts", of: try models())
        try await Scenario.seed(v1, at: url) { context in
            for index in 0..<postCount {
                let post = try context.insertObject(entityName: "Post")
                post.setValue(.string(postID(index)), forKey: "postID")
                post.setValue(.date(firstDate.addingTimeInterval(Double(index) * 3600)), forKey: "date")
                post.setValue(.string(texts[index % texts.count]), forKey: "content")
                post.setValue(.string(colours[index % colours.count]), forKey: "color")
            }
        }
    }
}

@Suite struct ColourfulPostsScenarioTests {
    @Test(arguments: TestEngine.allCases)
    func version1MigratesToVersion4InOneRun(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await ColourfulPosts.seed(at: url)
            let chain = try ColourfulPosts.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url)
            #expect(plan.steps.map(\.destination.name) == ["ColourfulPosts 2", "ColourfulPosts 3", "ColourfulPosts 4"])
            #expect(plan.steps.map { $0.mappingModels.map(\.isInferred) } == [[true], [false], [true]])
            #expect(plan.steps[1].mappingModels.map(\.name) == ["ColourfulPosts2To3"])
            #expect(plan.steps[1].mappingModels.first?.file?.hasSuffix("ColourfulPosts2To3.json") == true)
            #expect(plan.steps[1].strategy == .streamed)
            Scenario.checkProgress(progress, steps: 3)
            try await expectNoLeftovers(url)

            let v4 = try Scenario.version("ColourfulPosts 4", of: chain.models)
            #expect(v4.isCompatible(with: try await PersistentStore.metadata(at: url)))
            let context = try await Scenario.open(v4, at: url)
            #expect(try await Scenario.count("Post", in: context) == ColourfulPosts.postCount)
            #expect(try await Scenario.count("Section", in: context) == ColourfulPosts.postCount)

            // One post's values, and its section's, both ways.
            let post = try await Scenario.one("Post", "postID", "POST-0005", in: context)
            #expect(post.value(forKey: "date") == .date(ColourfulPosts.firstDate.addingTimeInterval(5 * 3600)))
            #expect(post.value(forKey: "hexColor") == "259EB7")
            #expect(post.value(forKey: "softDeleted") == false)
            let sections = try await post.destinations(forKey: "sections")
            #expect(sections.count == 1)
            let section = try #require(sections.first)
            #expect(section.value(forKey: "title") == "Prog...")
            #expect(section.value(forKey: "body") == "Progressive migrations take a store through every version it missed.")
            #expect(section.value(forKey: "index") == 0)
            #expect(try await section.destination(forKey: "post") == post)

            // A content shorter than four characters is all of the title.
            let short = try await Scenario.one("Post", "postID", "POST-0002", in: context)
            let shortSection = try #require(try await short.destinations(forKey: "sections").first)
            #expect(shortSection.value(forKey: "title") == "Hi...")
            #expect(shortSection.value(forKey: "body") == "Hi")

            // Every post: not deleted, one section at index 0 whose body is its old content.
            #expect(try await Scenario.count("Post", in: context, where: "softDeleted == NO") == ColourfulPosts.postCount)
            #expect(try await Scenario.count("Post", in: context, where: "sections.@count == 1") == ColourfulPosts.postCount)
            #expect(try await Scenario.count("Section", in: context, where: "index == 0 AND post != nil") == ColourfulPosts.postCount)
            for (index, post) in try await Scenario.all("Post", in: context).enumerated() {
                #expect(post.value(forKey: "postID") == .string(ColourfulPosts.postID(index)))
                #expect(post.value(forKey: "hexColor") == .string(ColourfulPosts.colours[index % ColourfulPosts.colours.count]))
                #expect(post.value(forKey: "softDeleted") == false)
                let body = try await post.destinations(forKey: "sections").map { $0.value(forKey: "body") }
                #expect(body == [.string(ColourfulPosts.texts[index % ColourfulPosts.texts.count])])
            }

            // The store has Core Data's layout: the flag is a column, the section points at its post.
            let flags = try await storeRows(url, "SELECT ZSOFTDELETED, count(*) FROM ZPOST GROUP BY ZSOFTDELETED")
            #expect(flags.map { [$0[0].int64, $0[1].int64] } == [[0, Int64(ColourfulPosts.postCount)]])
            let joined = try await storeRows(url, "SELECT count(*) FROM ZSECTION s JOIN ZPOST p ON s.ZPOST = p.Z_PK WHERE s.ZBODY IS NOT NULL")
            #expect(joined.first?.first?.int64 == Int64(ColourfulPosts.postCount))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func version1MigratesToVersion2ByRenamingColour(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await ColourfulPosts.seed(at: url)
            let chain = try ColourfulPosts.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url, to: "ColourfulPosts 2")
            #expect(plan.steps.count == 1)
            Scenario.checkProgress(progress, steps: 1)
            let v2 = try Scenario.version("ColourfulPosts 2", of: chain.models)
            let context = try await Scenario.open(v2, at: url)
            #expect(try await Scenario.count("Post", in: context) == ColourfulPosts.postCount)
            let post = try await Scenario.one("Post", "postID", "POST-0001", in: context)
            #expect(post.value(forKey: "hexColor") == "511ADB")
            #expect(post.value(forKey: "content") == .string(ColourfulPosts.texts[1]))
            #expect(post.value(forKey: "date") == .date(ColourfulPosts.firstDate.addingTimeInterval(3600)))
            #expect(try await Scenario.count("Post", in: context, where: "hexColor == nil") == 0)
        }
    }

    /// The failing step is the first the store needs: the store is as it was on every engine.
    @Test(arguments: TestEngine.allCases)
    func aPolicyThatFailsHalfwayLeavesTheStoreAsItWas(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await ColourfulPosts.seed(at: url)
            _ = try await Scenario.migrate(try ColourfulPosts.chain(), store: url, to: "ColourfulPosts 2")
            let before = try await StoreSnapshot(url)
            #expect(before.leftovers.isEmpty)

            let chain = try ColourfulPosts.chain(policy: FailingPostToPostMigrationPolicy.self)
            let error = await #expect(throws: MigrationError.self) {
                _ = try await Scenario.migrate(chain, store: url)
            }
            #expect((error?.underlying as? ScenarioPolicyError)?.description == "the post POST-0012 cannot be split")
            try await expectUnchanged(url, since: before)

            // The untouched store still opens at version 2 and migrates once the policy is fixed.
            _ = try await Scenario.migrate(try ColourfulPosts.chain(), store: url)
            let v4 = try Scenario.version("ColourfulPosts 4", of: chain.models)
            #expect(try await Scenario.count("Section", in: try await Scenario.open(v4, at: url)) == ColourfulPosts.postCount)
        }
    }

    /// The failing step comes after one that completed. SQLite runs the whole plan on copies,
    /// so the store is as it was; PostgreSQL commits each step, so the store is whole at
    /// version 2, and the failed step left nothing behind.
    @Test(arguments: TestEngine.allCases)
    func aPolicyFailingInTheSecondStepKeepsTheFirstOnlyOnPostgreSQL(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await ColourfulPosts.seed(at: url)
            let before = try await StoreSnapshot(url)

            let chain = try ColourfulPosts.chain(policy: FailingPostToPostMigrationPolicy.self)
            let error = await #expect(throws: MigrationError.self) {
                _ = try await Scenario.migrate(chain, store: url)
            }
            #expect((error?.underlying as? ScenarioPolicyError)?.description == "the post POST-0012 cannot be split")
            let metadata = try await PersistentStore.metadata(at: url)
            switch engine {
            case .sqlite:
                try await expectUnchanged(url, since: before)
                #expect(try Scenario.version("ColourfulPosts", of: chain.models).isCompatible(with: metadata))
            case .postgres:
                try await expectNoLeftovers(url)
                let v2 = try Scenario.version("ColourfulPosts 2", of: chain.models)
                #expect(v2.isCompatible(with: metadata))
                let context = try await Scenario.open(v2, at: url)
                #expect(try await Scenario.count("Post", in: context, where: "hexColor != nil") == ColourfulPosts.postCount)
            }

            // The next run takes the store from where it is to version 4.
            let (plan, _) = try await Scenario.migrate(try ColourfulPosts.chain(), store: url)
            #expect(plan.steps.count == (engine == .sqlite ? 3 : 2))
            let v4 = try Scenario.version("ColourfulPosts 4", of: chain.models)
            #expect(try await Scenario.count("Section", in: try await Scenario.open(v4, at: url)) == ColourfulPosts.postCount)
        }
    }
}
