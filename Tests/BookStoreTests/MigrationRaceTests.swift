import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Several processes migrating one store at once: one migrates, the others wait for its
/// lock, find the store current and succeed.
@Suite("racing migrations")
struct MigrationRaceTests {
    /// The race happened when a process waited for the lock and then found the store migrated
    /// by another ("meanwhile"); rounds, each on a new store, go on until one shows it, and
    /// the test fails if none of five does.
    @Test(arguments: TestEngine.allCases)
    func fourProcessesGiveOneMigrationAndFourSuccesses(engine: TestEngine) async throws {
        var raced = false
        for _ in 1...5 where !raced {
            try await engine.withStoreURL { url in
                let seed = try await BookStoreProcess.running(["seed", "--model-version", "1", "--store", url.description])
                #expect(seed.status == 0, "\(seed.stderr)")
                let race = try await raceMigrations(of: url, processes: 4)
                #expect(race.migrated == 1)
                raced = race.waited > 0
                try await expectNoLeftovers(url)
                let synopses = try await PersistentStore.inspect(url) {
                    try $0.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE")?.int64
                }
                #expect(synopses == 4)
            }
        }
        #expect(raced, "in five rounds no process waited for another's migration")
    }
}

/// Starts `processes` `bookstore migrate` runs on one store at once; expects each to
/// succeed, either migrating or finding nothing to do. Returns how many migrated, and how
/// many waited for the lock and then found the store migrated by another meanwhile.
func raceMigrations(of url: StoreURL, processes count: Int) async throws -> (migrated: Int, waited: Int) {
    let outputs = try await withThrowingTaskGroup(of: BuiltCommand.Output.self) { group in
        for _ in 0..<count {
            group.addTask { try await BuiltCommand("bookstore").run(["migrate", "--store", url.description, "--log-level", "notice"]) }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
    var migrated = 0
    var waited = 0
    for output in outputs {
        #expect(output.status == 0, "\(output.stderr)")
        if output.stdout.contains("Migrated \(url)") {
            migrated += 1
        } else {
            #expect(output.stdout.contains("nothing to do"), "\(output.stdout)")
            if output.stdout.contains("meanwhile") { waited += 1 }
        }
    }
    return (migrated, waited)
}
