import Foundation
import Testing
@testable import Persistence

@Suite("bookstore migrate")
struct MigrateCommandTests {
    @Test func planOnAVersion1StoreListsFourStepsAndChangesNothing() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 1, into: directory)
        let path = directory.appendingPathComponent("bookstore.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let plan = try BookStoreProcess.run(["migrate", "--plan", "--store", url.description])
        #expect(plan.status == 0, "\(plan.stderr)")
        let steps = plan.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }
        #expect(steps.count == 4)
        #expect(steps[0].contains("1. BookStore → BookStore 2 ("))
        #expect(steps[2].contains("3. BookStore 3 → BookStore 4 (streamed: mapping Model3To4, policy PublicationToPublicationMigrationPolicy)"))
        #expect(steps[3].contains("4. BookStore 4 → BookStore 5 (streamed: inferred mapping, manager SynopsisMigrationManager)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try leftovers(in: directory).isEmpty)
    }

    @Test func migrateLogsProgressAndStatusTurnsCompatible() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 3, into: directory)
        let status = try BookStoreProcess.run(["status", "--store", url.description])
        #expect(status.stdout.contains("Pending steps:"))
        #expect(status.stdout.contains("1. BookStore 3 → BookStore 4"))
        #expect(status.stdout.contains("2. BookStore 4 → BookStore 5"))

        let migrate = try BookStoreProcess.run(["migrate", "--store", url.description])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stdout.contains("Migrated \(url) from BookStore 3 to BookStore 5 in 2 steps"))
        let percentages = migrate.stderr.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "Migration progress: ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(percentages.last == 100)
        #expect(percentages == percentages.sorted())
        #expect(migrate.stderr.contains("persistence.migration.entity_mapping=PublicationToPublication"))

        let after = try BookStoreProcess.run(["status", "--store", url.description])
        #expect(after.stdout.contains("Store model version:   BookStore 5"))
        #expect(after.stdout.contains("Compatible:            yes"))
        #expect(!after.stdout.contains("Pending steps:"))
    }

    @Test func migrateToAnIntermediateVersionStopsThere() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 1, into: directory)
        let migrate = try BookStoreProcess.run(["migrate", "--to", "3", "--store", url.description])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let status = try BookStoreProcess.run(["status", "--store", url.description])
        #expect(status.stdout.contains("Store model version:   BookStore 3"))
    }

    @Test func anUnknownTargetVersionIsAClearError() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 1, into: directory)
        let migrate = try BookStoreProcess.run(["migrate", "--to", "9", "--store", url.description])
        #expect(migrate.status != 0)
        #expect(migrate.stderr.contains("error: there is no model version 9"))
    }

    @Test func migratingBackwardsIsRefused() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 3, into: directory)
        let path = directory.appendingPathComponent("bookstore.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let migrate = try BookStoreProcess.run(["migrate", "--to", "2", "--store", url.description])
        #expect(migrate.status != 0)
        #expect(migrate.stderr.contains("forward"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
