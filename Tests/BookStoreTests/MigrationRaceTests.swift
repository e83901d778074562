import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing
@testable import Persistence

/// Several processes migrating one store at once: one migrates, the others wait for its
/// lock, find the store current and succeed.
@Suite("racing migrations")
struct MigrationRaceTests {
    @Test func fourProcessesGiveOneMigrationAndFourSuccesses() async throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 1, into: directory)
        let migrated = try await raceMigrations(of: url, processes: 4)
        #expect(migrated == 1)
        let left = try leftovers(in: directory)
        #expect(left.isEmpty, "no lock file, log or work folder is left; found \(left)")
        let connection = try SQLiteConnection(path: url.description.replacingOccurrences(of: "sqlite://", with: ""), mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE")?.int64 == 4)
    }
}

/// Starts `processes` `bookstore migrate` runs on one store at once; expects each to
/// succeed, either migrating or finding nothing to do, and returns how many migrated.
///
/// Through ``BuiltCommand``, which starts each child under the test process's launch lock:
/// a throwaway PostgreSQL server started by another test meanwhile would otherwise inherit
/// the pipes and keep them open, and reading a child's output to its end would never end.
func raceMigrations(of url: StoreURL, processes count: Int) async throws -> Int {
    let outputs = try await withThrowingTaskGroup(of: BuiltCommand.Output.self) { group in
        for _ in 0..<count {
            group.addTask { try await BuiltCommand("bookstore").run(["migrate", "--store", url.description, "--log-level", "notice"]) }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
    var migrated = 0
    for output in outputs {
        #expect(output.status == 0, "\(output.stderr)")
        if output.stdout.contains("Migrated \(url)") { migrated += 1 } else { #expect(output.stdout.contains("nothing to do"), "\(output.stdout)") }
    }
    return migrated
}
