import Foundation
import Testing
@testable import Persistence

/// A migration killed with SIGKILL halfway — no clean-up code runs — leaves the store as it
/// was, and the next migration removes the leftovers and completes.
@Suite("a killed migration")
struct MigrationCrashTests {
    @Test func leavesTheStoreWholeAndTheNextRunCompletes() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let path = directory.appendingPathComponent("bookstore.sqlite").path
        let url = "sqlite://\(path)"
        let seed = try BookStoreProcess.run(["seed", "--model-version", "3", "--count", "1500", "--store", url])
        #expect(seed.status == 0, "\(seed.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let process = Process()
        process.executableURL = try BookStoreProcess.executable
        process.arguments = ["migrate", "--store", url, "--log-level", "warning"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until the streamed step is writing its new store, then kill the process.
        var writing = false
        for _ in 0..<3_000 where !writing {
            let folders = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".bookstore.sqlite.migration-") }
            writing = folders.contains { folder in
                // A folder may vanish between the two listings; that is not yet "writing".
                let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? []
                return files.contains { $0.hasPrefix("step1.sqlite") }
            }
            if !writing { usleep(10_000) }
        }
        #expect(writing, "the migration never started writing its new store")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store must be as it was")
        #expect(try leftovers(in: directory).contains { $0.hasPrefix(".bookstore.sqlite.migration-") }, "the killed run's work folder is left behind")
        let status = try BookStoreProcess.run(["status", "--store", url])
        #expect(status.stdout.contains("Store model version:   BookStore 3"))

        let again = try BookStoreProcess.run(["migrate", "--store", url, "--log-level", "notice"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("removed the work folder of an interrupted migration"))
        #expect(try leftovers(in: directory).isEmpty)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try connection.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS = ZTITLE")?.int64 == 1504)
        #expect(try connection.scalar("SELECT count(*) FROM ZPAGE WHERE ZPUBLICATION IS NOT NULL")?.int64 == 3012)
    }
}
