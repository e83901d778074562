import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The built `persistence` executable, run as a user would.
let persistenceCommand = BuiltCommand("persistence")

@Suite("persistence command")
struct PersistenceCommandTests {
    let models = ModelFixtures.colourPosts.path
    let mappings = CoreDataFixtures.mappings.path

    /// Apple's store as Core Data wrote it, which is a SQLite file; `inspect` on a copy on
    /// each engine is in the copy test below.
    @Test func inspectNamesTheVersionOfACoreDataStoreAndItsPosts() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let path = try #require(url.filePath)
            let output = try await persistenceCommand.run(["inspect", "--store", "sqlite://\(path)", "--models", models])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout.contains("Written by:     Apple's Core Data (no model version name of ours, framework version 847)\n"))
            #expect(output.stdout.contains("Model version:  CoreDataMigration_Example\n"))
            #expect(output.stdout.contains("Decided by:     Core Data's version hashes"))
            #expect(output.stdout.contains("  Post                 1001 rows\n"))

            let bare = try await persistenceCommand.run(["inspect", "--store", "sqlite://\(path)"])
            #expect(bare.status == 0, "\(bare.stderr)")
            #expect(bare.stdout.contains("  ZPOST                1001 rows\n"))
            #expect(bare.stdout.contains("  Z_PRIMARYKEY         1 row\n"))
            #expect(bare.stdout.contains("NSPersistenceFrameworkVersion: 847"))
        }
    }

    /// Apple's store is laid out as its version creates it, by Core Data's names and numbers.
    @Test func checkFindsAppleStoreLaidOutAsItsVersionCreatesIt() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let path = try #require(url.filePath)
            let output = try await persistenceCommand.run(["check", "--store", "sqlite://\(path)", "--models", models])
            #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
            #expect(output.stdout.contains("Model version:  CoreDataMigration_Example\n"), "\(output.stdout)")
            #expect(output.stdout.contains("Layout:         as 'CoreDataMigration_Example' creates it\n"), "\(output.stdout)")
        }
    }

    /// A Core Data user of `persistence` has no `bookstore` command and no BookStore
    /// folders: a store that is not there, or a step that needs a mapping model, is
    /// explained in their terms.
    @Test func hintsNameNothingOfBookStore() async throws {
        let missing = "/nonexistent-\(UUID().uuidString)/Posts.sqlite"
        let output = try await persistenceCommand.run(["inspect", "--store", "sqlite://\(missing)", "--models", models])
        #expect(output.status != 0)
        #expect(output.stderr.contains("there is no store at"), "\(output.stderr)")
        #expect(!output.stderr.contains("bookstore") && !output.stderr.contains("Migrations/"), "\(output.stderr)")

        let error = #expect(throws: MigrationError.self) {
            try MappingModel.inferred(from: try ShopModels.v2(), to: try ShopModels.v3WithANewRequiredCode())
        }
        #expect(error.map { !"\($0)".contains("Migrations/") && "\($0)".contains(".xcmappingmodel") } == true, "\(String(describing: error))")
    }

    /// Without `--chain` the plan is Core Data's (straight, or along the mapping files);
    /// `--chain` names the app's order, and a version it does not know is refused before
    /// anything is read. Only plans: the store is left as it was.
    @Test func migrateSaysItsRouteAndTakesAChain() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let before = try await StoreSnapshot(url)
            let straight = try await persistenceCommand.run([
                "migrate", "--models", models, "--mappings", mappings, "--store", url.description, "--plan",
            ])
            #expect(straight.stdout.contains("Route:                through the versions the mapping models lead through"), "\(straight.stdout)")
            let chained = try await persistenceCommand.run([
                "migrate", "--models", models, "--mappings", mappings, "--store", url.description, "--plan",
                "--chain", "1, 2, 3, CoreDataMigration_Example 4",
            ])
            #expect(chained.stdout.contains("Route:                through the versions the app's chain names, in its order"), "\(chained.stdout)")
            #expect(
                chained.stdout.contains("  3. CoreDataMigration_Example 3 → CoreDataMigration_Example 4 (in place: inferred mapping)"),
                "\(chained.stdout)"
            )
            // Two versions straight: one inferred step, as Core Data would take it.
            let skipping = try await persistenceCommand.run(["migrate", "--models", models, "--store", url.description, "--plan", "--to", "2"])
            #expect(skipping.stdout.contains("Route:                straight to the target in one step"), "\(skipping.stdout)")
            let unknown = try await persistenceCommand.run(["migrate", "--models", models, "--store", url.description, "--plan", "--chain", "1,7"])
            #expect(unknown.status != 0)
            #expect(unknown.stderr.contains("the version chain names '7'"), "\(unknown.stderr)")
            try await expectUnchanged(url, since: before)
        }
    }

    /// On each engine: Apple's store as it is (SQLite), or copied with `persistence copy`.
    @Test(arguments: TestEngine.allCases)
    func migrateRefusesAStepThatNeedsAPolicyAndChangesNothing(engine: TestEngine) async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { apple in
            try await engine.withStoreURL { other in
                let url: StoreURL
                if engine == .sqlite {
                    url = apple
                } else {
                    url = other
                    let copy = try await persistenceCommand.run(["copy", "--models", models, "--from", apple.description, "--to", url.description])
                    #expect(copy.status == 0, "\(copy.stderr)")
                }
                let before = try await StoreSnapshot(url)
                let output = try await persistenceCommand.run(["migrate", "--models", models, "--mappings", mappings, "--store", url.description])
                #expect(output.status != 0)
                #expect(
                    output.stdout.contains("  1. CoreDataMigration_Example → CoreDataMigration_Example 2 (set-based: mapping Example1To2)"),
                    "\(output.stdout)"
                )
                #expect(
                    output.stderr.contains(
                        "step 2, CoreDataMigration_Example 2 → CoreDataMigration_Example 3, needs the custom entity migration policy 'ColorFromPostMigrationPolicy'"
                    ),
                    "\(output.stderr)"
                )
                try await expectUnchanged(url, since: before)

                // Up to the step before it, the command migrates.
                let first = try await persistenceCommand.run([
                    "migrate", "--models", models, "--mappings", mappings, "--store", url.description, "--to", "CoreDataMigration_Example 2",
                ])
                #expect(first.status == 0, "\(first.stderr)")
                #expect(
                    first.stdout.contains("Migrated \(url) from CoreDataMigration_Example to CoreDataMigration_Example 2 in 1 step"),
                    "\(first.stdout)"
                )
                let greatest = try await storeRows(url, "SELECT ZHEXCOLOR FROM ZPOST WHERE ZPOSTID = 'FFC75007-7B10-44B5-8B3D-C13FF9E47BAD'")
                #expect(greatest.first?.first?.text == "259EB7")
                #expect(try await storeRows(url, "SELECT count(*) FROM ZPOST").first?.first?.int64 == 1001)
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func copyWritesTheStoreToEitherEngineAndMigrateTakesAVersionNumberAndABatchSize(engine: TestEngine) async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { source in
            let path = try #require(source.filePath)
            try await engine.withStoreURL { destination in
                if case .sqlite(let file) = destination.kind { try? FileManager.default.removeItem(atPath: file) }
                let copy = try await persistenceCommand.run([
                    "copy", "--models", models, "--from", "sqlite://\(path)", "--to", destination.description,
                ])
                #expect(copy.status == 0, "\(copy.stderr)")
                #expect(copy.stdout.contains("Copied sqlite://\(path) to \(destination): model version CoreDataMigration_Example,"), "\(copy.stdout)")
                let again = try await persistenceCommand.run([
                    "copy", "--models", models, "--from", "sqlite://\(path)", "--to", destination.description,
                ])
                #expect(again.status != 0)
                #expect(again.stderr.contains("--replace"), "\(again.stderr)")
                let inspect = try await persistenceCommand.run(["inspect", "--store", destination.description, "--models", models])
                #expect(inspect.status == 0, "\(inspect.stderr)")
                #expect(inspect.stdout.contains("Model version:  CoreDataMigration_Example\n"), "\(inspect.stdout)")
                #expect(inspect.stdout.contains("  Post                 1001 rows\n"), "\(inspect.stdout)")

                let refused = try await persistenceCommand.run([
                    "migrate", "--models", models, "--store", destination.description, "--to", "2", "--batch-size", "0",
                ])
                #expect(refused.status != 0)
                #expect(refused.stderr.contains("--batch-size must be at least 1"), "\(refused.stderr)")
                let unknown = try await persistenceCommand.run(["migrate", "--models", models, "--store", destination.description, "--to", "9"])
                #expect(unknown.status != 0)
                #expect(unknown.stderr.contains("no model version named or numbered '9'"), "\(unknown.stderr)")

                // Version 2 by its number, seven posts at a time.
                let migrate = try await persistenceCommand.run([
                    "migrate", "--models", models, "--mappings", mappings, "--store", destination.description,
                    "--to", "2", "--batch-size", "7",
                ])
                #expect(migrate.status == 0, "\(migrate.stderr)")
                #expect(migrate.stdout.contains("from CoreDataMigration_Example to CoreDataMigration_Example 2 in 1 step"), "\(migrate.stdout)")
                #expect(try await storeRows(destination, "SELECT count(*) FROM ZPOST").first?.first?.int64 == 1001)
                let greatest = try await storeRows(destination, "SELECT ZHEXCOLOR FROM ZPOST WHERE ZPOSTID = 'FFC75007-7B10-44B5-8B3D-C13FF9E47BAD'")
                #expect(greatest.first?.first?.text == "259EB7")
            }
        }
    }

    @Test func versionsAreFoundByNameOrNumber() throws {
        let versions = try CoreDataFixtures.models()
        #expect(versions.version(namedOrNumbered: "1")?.name == "CoreDataMigration_Example")
        #expect(versions.version(namedOrNumbered: "3")?.name == "CoreDataMigration_Example 3")
        #expect(versions.version(namedOrNumbered: "CoreDataMigration_Example 2")?.name == "CoreDataMigration_Example 2")
        #expect(versions.version(namedOrNumbered: "5") == nil)
        #expect(versions.version(namedOrNumbered: "0") == nil)
        #expect(versions.version(namedOrNumbered: "two") == nil)
    }

    /// In place in Apple's own SQLite file, which keeps Core Data's auto-vacuum and keys; the
    /// same command on a PostgreSQL copy is in the copy test above.
    @Test func migrateRunsAnInferredStepOnACoreDataStore() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[2]) { url in
            let path = try #require(url.filePath)
            let plan = try await persistenceCommand.run(["migrate", "--models", models, "--store", "sqlite://\(path)", "--plan"])
            #expect(plan.status == 0, "\(plan.stderr)")
            #expect(plan.stdout.contains("Store model version:  CoreDataMigration_Example 3\n"))
            #expect(
                plan.stdout.contains("  1. CoreDataMigration_Example 3 → CoreDataMigration_Example 4 (in place: inferred mapping)"),
                "\(plan.stdout)"
            )

            let output = try await persistenceCommand.run(["migrate", "--models", models, "--store", "sqlite://\(path)"])
            #expect(output.status == 0, "\(output.stderr)")
            let inspect = try await persistenceCommand.run(["inspect", "--store", "sqlite://\(path)", "--models", models])
            #expect(inspect.stdout.contains("Model version:  CoreDataMigration_Example 4\n"))
            #expect(inspect.stdout.contains("Decided by:     version hashes"))
            #expect(inspect.stdout.contains("  Post                 7995 rows\n"))
            #expect(inspect.stdout.contains("  Color                7995 rows\n"))
        }
    }

    @Test func validateFindsNoProblemInTheBookStoreModelsAndMappings() async throws {
        let output = try await persistenceCommand.run([
            "validate", "--models", "Migrations/BookStore.xcdatamodeld", "--mappings", "Migrations/Mappings",
        ])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains("Checked 5 model versions, 2 mapping files, 5 locked version(s) unchanged: no problems."))
        #expect(output.stdout.contains("note: Mappings/Model3To4.json names the policy 'PublicationToPublicationMigrationPolicy'"))

        let example = try await persistenceCommand.run(["validate", "--models", models, "--mappings", mappings])
        #expect(example.status == 0, "\(example.stdout)\(example.stderr)")
        #expect(example.stdout.contains("Checked 4 model versions, 2 mapping files: no problems."))
    }

    @Test func validateReportsEveryProblemWithItsFileAndLine() async throws {
        let folder = try ScenarioFolder()
        let broken = folder.url.appendingPathComponent("Mappings")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        let text = try String(contentsOf: CoreDataFixtures.mappings.appendingPathComponent("Example1To2.json"), encoding: .utf8)
            .replacingOccurrences(of: #""hexColor": "$source.color""#, with: #""hexColor": "$source.colour""#)
            .replacingOccurrences(of: #""postID": "$source.postID""#, with: #""postID": "$source.date""#)
        try Data(text.utf8).write(to: broken.appendingPathComponent("Example1To2.json"))
        let output = try await persistenceCommand.run(["validate", "--models", models, "--mappings", broken.path])
        #expect(output.status != 0)
        let lines = output.stdout.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(lines.count == 4, "\(output.stdout)")
        #expect(lines.contains { $0.hasPrefix("error: Mappings/Example1To2.json:12: PostToPost.hexColor: ") && $0.contains("colour") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("error: Mappings/Example1To2.json:13: PostToPost.postID: ") }, "\(lines)")
        // Without Example2To3.json beside it, no mapping model leads from the first two
        // versions, and the step straight to the current one cannot be inferred.
        for version in ["CoreDataMigration_Example", "CoreDataMigration_Example 2"] {
            #expect(
                lines.contains {
                    $0.contains("step \(version) → CoreDataMigration_Example 4: Post.color:")
                        && $0.contains("the new relationship 'color' is required")
                },
                "\(lines)"
            )
        }
        #expect(output.stdout.contains("Checked 4 model versions, 1 mapping file: 4 problems."), "\(output.stdout)")
    }
}
