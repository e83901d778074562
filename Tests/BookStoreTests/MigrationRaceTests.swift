import BookStoreTesting
import Foundation
import Testing
@testable import Persistence

/// Several processes migrating one store at once: one migrates, the others wait for its
/// lock, find the store current and succeed.
@Suite("racing migrations")
struct MigrationRaceTests {
    @Test func fourProcessesGiveOneMigrationAndFourSuccesses() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let url = try copyFixture(version: 1, into: directory)
        let migrated = try raceMigrations(of: url, processes: 4)
        #expect(migrated == 1)
        #expect(try leftovers(in: directory).isEmpty, "no lock file or work folder is left")
        let connection = try SQLiteConnection(path: url.description.replacingOccurrences(of: "sqlite://", with: ""), mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE")?.int64 == 4)
    }
}

/// Starts `processes` `bookstore migrate` runs on one store at once; expects each to
/// succeed, either migrating or finding nothing to do, and returns how many migrated.
func raceMigrations(of url: StoreURL, processes count: Int) throws -> Int {
    var processes: [(Process, Pipe, Pipe)] = []
    for _ in 0..<count {
        let process = Process()
        process.executableURL = try BookStoreProcess.executable
        process.arguments = ["migrate", "--store", url.description, "--log-level", "notice"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        processes.append((process, out, err))
    }
    for (process, _, _) in processes { try process.run() }
    var migrated = 0
    for (process, out, err) in processes {
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        if stdout.contains("Migrated \(url)") { migrated += 1 } else { #expect(stdout.contains("nothing to do"), "\(stdout)") }
    }
    return migrated
}
