import BookStoreTesting
import Foundation
import Testing
@testable import Persistence

@Suite("bookstore copy")
struct CopyCommandTests {
    func dump(_ path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        var lines: [String] = []
        for table in ["ZPUBLICATION", "ZPAGE", "Z_PRIMARYKEY", "Z_METADATA"] {
            for row in try connection.rows("SELECT * FROM \(table) ORDER BY 1") {
                lines.append(table + ": " + (0..<row.count).map { "\(row[$0])" }.joined(separator: "|"))
            }
        }
        return lines
    }

    @Test func aCopyKeepsEveryRowKeyAndTheMetadataAndThenMigrates() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 3, into: directory)
        let sourcePath = directory.appendingPathComponent("bookstore.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: sourcePath))
        let copyPath = directory.appendingPathComponent("copy.sqlite").path

        let copy = try BookStoreProcess.run(["copy", "--from", source.description, "--to", "sqlite://\(copyPath)"])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout.contains("model version BookStore 3"))
        #expect(try dump(copyPath) == (try dump(sourcePath)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: sourcePath)) == before, "the source is only read")

        let again = try BookStoreProcess.run(["copy", "--from", source.description, "--to", "sqlite://\(copyPath)"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("there is already a store") && again.stderr.contains("--replace"))

        let migrate = try BookStoreProcess.run(["migrate", "--store", "sqlite://\(copyPath)"])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let connection = try SQLiteConnection(path: copyPath, mode: .readOnly)
        let names = try connection.rows("SELECT ZFIRSTNAME, ZLASTNAME FROM ZPUBLICATION ORDER BY Z_PK").map { "\($0[0].text ?? "") \($0[1].text ?? "")" }
        #expect(names == ["Bill Smith", "John Doe", "Jane Doe", "Jack Brown"])
    }

    @Test func replaceSwapsTheWholeStore() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 1, into: directory)
        let target = directory.appendingPathComponent("target.sqlite")
        try FileManager.default.copyItem(at: fixtureURL(version: 4), to: target)
        let copy = try BookStoreProcess.run(["copy", "--from", source.description, "--to", "sqlite://\(target.path)", "--replace"])
        #expect(copy.status == 0, "\(copy.stderr)")
        let status = try BookStoreProcess.run(["status", "--store", "sqlite://\(target.path)"])
        #expect(status.stdout.contains("Store model version:   BookStore\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["bookstore.sqlite", "target.sqlite"])
    }

    @Test func copyingAStoreOntoItselfIsRefused() throws {
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        let source = try copyFixture(version: 2, into: directory)
        let copy = try BookStoreProcess.run(["copy", "--from", source.description, "--to", source.description, "--replace"])
        #expect(copy.status != 0)
        #expect(copy.stderr.contains("the same store"))
    }
}
