import BookStore
import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `bookstore migrate` and `status` as a user runs them, on a SQLite file and on a
/// PostgreSQL database holding the frozen stores.
@Suite("bookstore migrate")
struct MigrateCommandTests {
    @Test(arguments: TestEngine.allCases)
    func planOnAVersion1StoreListsFourStepsAndChangesNothing(engine: TestEngine) async throws {
        try await engine.withFixture(version: 1) { url, _ in
            let before = try await StoreSnapshot(url)
            let plan = try await BookStoreProcess.running(["migrate", "--plan", "--store", url.description])
            #expect(plan.status == 0, "\(plan.stderr)")
            let lines = plan.stdout.split(separator: "\n")
            let steps = lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("     ") }
            #expect(steps.count == 4)
            // Streamed steps say why, and how each entity mapping runs.
            let details = lines.filter { $0.hasPrefix("     ") }.map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(details.contains("streamed, because PublicationToPublication runs a policy"))
            #expect(
                details.contains(
                    "PublicationToPublication: instances as SQL, firstName, lastName set in Swift by PublicationToPublicationMigrationPolicy; relationships as SQL"
                )
            )
            #expect(details.filter { $0 == "PageToPage: instances as SQL; relationships as SQL" }.count == 2)
            #expect(
                details.contains(
                    "PublicationToPublication: instances as SQL, synopsis set in Swift by SynopsisMigrationManager; relationships as SQL"
                )
            )
            // Only the streamed steps say whether they are fused: the hooks' values are
            // declared, so nothing is made one by one to carry from one to the next.
            #expect(
                details.filter { $0.contains("fused with the next step") }
                    == ["not fused with the next step, because BookStore 3 → BookStore 4 makes every instance in SQL: nothing to carry in memory"]
            )
            // Both streamed steps are continued after a kill.
            #expect(
                details.filter { $0.hasPrefix("after a kill:") }
                    == Array(
                        repeating:
                            "after a kill: continued from its last batch, unless the store was written to since",
                        count: 2
                    )
            )
            #expect(steps.first?.contains("1. BookStore → BookStore 2 (") == true)
            #expect(
                steps.dropFirst(2).first?.contains(
                    "3. BookStore 3 → BookStore 4 (streamed: mapping Model3To4, policy PublicationToPublicationMigrationPolicy)"
                ) == true
            )
            #expect(
                steps.dropFirst(3).first?.contains("4. BookStore 4 → BookStore 5 (streamed: inferred mapping, manager SynopsisMigrationManager)")
                    == true
            )
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func migrateLogsProgressAndStatusTurnsCompatible(engine: TestEngine) async throws {
        try await engine.withFixture(version: 3) { url, _ in
            let status = try await BookStoreProcess.running(["status", "--store", url.description])
            #expect(status.stdout.contains("Pending steps:"))
            #expect(status.stdout.contains("1. BookStore 3 → BookStore 4"))
            #expect(status.stdout.contains("2. BookStore 4 → BookStore 5"))

            let migrate = try await BookStoreProcess.running(["migrate", "--store", url.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(migrate.stdout.contains("Migrated \(url) from BookStore 3 to BookStore 5 in 2 steps"))
            let percentages = migrate.stderr.split(separator: "\n").compactMap { line -> Int? in
                guard let range = line.range(of: "Migration progress of BookStore 4 → BookStore 5: ") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            #expect(percentages.last == 100)
            #expect(percentages == percentages.sorted())
            #expect(migrate.stderr.contains("persistence.migration.entity_mapping=PublicationToPublication"))

            let after = try await BookStoreProcess.running(["status", "--store", url.description])
            #expect(after.stdout.contains("Store model version:   BookStore 5"))
            #expect(after.stdout.contains("Compatible:            yes"))
            #expect(!after.stdout.contains("Pending steps:"))
            try await expectNoLeftovers(url)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func migrateToAnIntermediateVersionStopsThere(engine: TestEngine) async throws {
        try await engine.withFixture(version: 1) { url, _ in
            let migrate = try await BookStoreProcess.running(["migrate", "--to", "3", "--store", url.description])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            let status = try await BookStoreProcess.running(["status", "--store", url.description])
            #expect(status.stdout.contains("Store model version:   BookStore 3"))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anUnknownTargetVersionIsAClearErrorAndChangesNothing(engine: TestEngine) async throws {
        try await engine.withFixture(version: 1) { url, _ in
            let before = try await StoreSnapshot(url)
            let migrate = try await BookStoreProcess.running(["migrate", "--to", "9", "--store", url.description])
            #expect(migrate.status != 0)
            #expect(migrate.stderr.contains("error: there is no model version 9"))
            try await expectUnchanged(url, since: before)
        }
    }

    /// Back from 3 to 2 undoes renames only and runs; on to 1 drops every author and is
    /// refused until that is accepted, counting them.
    @Test(arguments: TestEngine.allCases)
    func migratingBackDropsAuthorsOnlyWhenAccepted(engine: TestEngine) async throws {
        try await engine.withFixture(version: 3) { url, _ in
            let kit = MigrationTestKit(chain: try BookStoreMigration.chain(models: try loadModels()), engine: engine, logger: quietLogger)
            let authors = try await kit.values("author", of: "Publication", in: url).filter { $0 != .null }.count
            #expect(authors > 0)
            let two = try await BookStoreProcess.running(["migrate", "--to", "2", "--store", url.description])
            #expect(two.status == 0, "\(two.stderr)")
            #expect(two.stdout.contains("Migrated \(url) from BookStore 3 to BookStore 2 in 1 step"), "\(two.stdout)")
            let before = try await StoreSnapshot(url)
            let one = try await BookStoreProcess.running(["migrate", "--to", "1", "--store", url.description])
            #expect(one.status != 0)
            #expect(
                one.stderr.contains("Book.author is not carried: no property mapping of BookToBook reads it — \(authors) rows have a value"),
                "\(one.stderr)"
            )
            #expect(one.stderr.contains("--accept-data-loss"), "\(one.stderr)")
            try await expectUnchanged(url, since: before)
        }
    }
}
