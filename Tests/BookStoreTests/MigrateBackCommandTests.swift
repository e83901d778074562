import BookStore
import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `bookstore migrate --to` an earlier version, as an operator rolling a release back runs
/// it, on a store the `seed` command wrote at BookStore 5.
@Suite("bookstore migrate back")
struct MigrateBackCommandTests {
    @Test(arguments: TestEngine.allCases)
    func backToFourSaysHowManySynopsesItDropsAndRunsOnlyWhenAccepted(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let kit = MigrationTestKit(chain: try BookStoreMigration.chain(models: try loadModels()), engine: engine, logger: quietLogger)
            let synopses = try await kit.values("synopsis", of: "Publication", in: url).filter { $0 != .null }.count
            let titles = try await kit.values("title", of: "Publication", in: url)
            #expect(synopses > 0)
            let before = try await StoreSnapshot(url)

            let refused = try await BookStoreProcess.running(["migrate", "--store", url.description, "--to", "BookStore 4"])
            #expect(refused.status != 0)
            #expect(refused.stdout.contains("Direction:            back, to an older version"), "\(refused.stdout)")
            #expect(
                refused.stdout.contains(
                    "warning: Publication.synopsis is not carried: no property mapping of PublicationToPublication reads it — \(synopses) rows have a value"
                ),
                "\(refused.stdout)"
            )
            #expect(refused.stderr.contains("drops data"), "\(refused.stderr)")
            #expect(refused.stderr.contains("— \(synopses) rows have a value"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--accept-data-loss"), "\(refused.stderr)")
            #expect(refused.stderr.contains("the store was not changed"), "\(refused.stderr)")
            try await expectUnchanged(url, since: before)

            if engine == .postgres {
                let online = try await BookStoreProcess.running([
                    "migrate", "--store", url.description, "--to", "4", "--online", "--accept-data-loss",
                ])
                #expect(online.status != 0)
                #expect(online.stderr.contains("does not run online"), "\(online.stderr)")
                try await expectUnchanged(url, since: before)
            }

            let accepted = try await BookStoreProcess.running(["migrate", "--store", url.description, "--to", "BookStore 4", "--accept-data-loss"])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(accepted.stdout.contains("Migrated \(url) from BookStore 5 to BookStore 4 in 1 step"), "\(accepted.stdout)")
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 4")

            // On to 3 drops nothing for certain: the shipped mapping back joins the names.
            let three = try await BookStoreProcess.running(["migrate", "--store", url.description, "--to", "3"])
            #expect(three.status == 0, "\(three.stderr)")
            #expect(
                three.stdout.contains(
                    "1. BookStore 4 → BookStore 3 (back, streamed: mapping Model4To3, policy PublicationJoiningNamesMigrationPolicy)"
                )
            )

            // The release that wrote 5 migrates it forward again, every publication there.
            let forward = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(forward.status == 0, "\(forward.stderr)")
            #expect(try await kit.values("title", of: "Publication", in: url) == titles)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func planBackChangesNothing(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let before = try await StoreSnapshot(url)
            let plan = try await BookStoreProcess.running(["migrate", "--store", url.description, "--to", "BookStore", "--plan"])
            #expect(plan.status == 0, "\(plan.stderr)")
            let steps = plan.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("     ") }.map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            #expect(
                steps.map { String($0.prefix(while: { $0 != "(" })) } == [
                    "1. BookStore 5 → BookStore 4 ", "2. BookStore 4 → BookStore 3 ", "3. BookStore 3 → BookStore 2 ", "4. BookStore 2 → BookStore ",
                ]
            )
            #expect(plan.stdout.contains("warning: Book.author is not carried"), "\(plan.stdout)")
            try await expectUnchanged(url, since: before)
        }
    }

    /// `persistence migrate --to` an earlier version, from the model files alone: back to 4
    /// is inferred (the inverse of a step that only added the synopsis) and runs only with
    /// `--accept-data-loss`; back to 3 needs the policy of the mapping back, Swift the command
    /// does not have, and is refused before anything is written.
    @Test(arguments: TestEngine.allCases)
    func persistenceMigratesBackFromTheModelFiles(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let models = BuiltCommand.packageRoot.appendingPathComponent("Migrations/BookStore.xcdatamodeld").path
            let mappings = BuiltCommand.packageRoot.appendingPathComponent("Migrations/Mappings").path
            let command = BuiltCommand("persistence")
            let kit = MigrationTestKit(chain: try BookStoreMigration.chain(models: try loadModels()), engine: engine, logger: quietLogger)
            let synopses = try await kit.values("synopsis", of: "Publication", in: url).filter { $0 != .null }.count
            let before = try await StoreSnapshot(url)
            let arguments = ["migrate", "--store", url.description, "--models", models, "--mappings", mappings]

            let three = try await command.run(arguments + ["--to", "BookStore 3", "--accept-data-loss"])
            #expect(three.status != 0)
            #expect(three.stderr.contains("PublicationJoiningNamesMigrationPolicy"), "\(three.stderr)")
            try await expectUnchanged(url, since: before)

            let refused = try await command.run(arguments + ["--to", "BookStore 4"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("Publication.synopsis is not carried"), "\(refused.stderr)")
            #expect(refused.stderr.contains("— \(synopses) rows have a value"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--accept-data-loss"), "\(refused.stderr)")
            try await expectUnchanged(url, since: before)

            let accepted = try await command.run(arguments + ["--to", "BookStore 4", "--accept-data-loss"])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 4")
            #expect(try await PersistentStore.metadata(at: url).migratedBackFrom == "BookStore 5")
        }
    }
}
