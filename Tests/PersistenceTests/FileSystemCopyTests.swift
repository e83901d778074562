import Foundation
import Testing
@testable import Persistence

@Suite struct FileSystemCopyTests {
    @Test func aCopyHasEveryByteAndNeverOverwrites() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("store.sqlite").path
        let copy = folder.appendingPathComponent("copy.sqlite").path
        // Larger than one buffer, and not a multiple of a page.
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<(3 << 20) + 123).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: URL(fileURLWithPath: source))
        try FileSystem.copy(source, to: copy)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)

        let error = #expect(throws: MigrationError.self) { try FileSystem.copy(source, to: copy) }
        #expect(error?.description.contains("creating the copy") == true)
        let empty = folder.appendingPathComponent("empty").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        try FileSystem.copy(empty, to: folder.appendingPathComponent("empty copy").path)
        #expect(try Data(contentsOf: folder.appendingPathComponent("empty copy")).isEmpty)
    }
}
