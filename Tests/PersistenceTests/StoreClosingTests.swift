import Foundation
import Testing
@testable import Persistence

/// A SQLite store that was opened, read and let go is one file again: SQLite removes the
/// `-wal` and `-shm` files only when the last connection to close can write.
@Suite struct StoreClosingTests {
    @Test func aStoreReadAndLetGoLeavesOnlyItsFile() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        let model = try LibraryModel.make()
        try await makeClosedStore(at: path, model: model) { container in
            let context = container.newContext()
            try context.insertObject(entityName: "Book").setValue("Stored", forKey: "title")
            try await context.save()
        }
        let folder = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["store.sqlite"])

        do {
            // Reads run on the read-only connections, which open the WAL.
            let container = try await PersistentContainer.open(model: model, store: .sqlite(path), logger: testLogger)
            let context = container.newContext()
            #expect(try await context.count(for: FetchRequest(entityName: "Book")) == 1)
            #expect(try await context.fetch(FetchRequest(entityName: "Book")).count == 1)
        }
        try await waitUntilWriteAheadLogIsRemoved(path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["store.sqlite"], "no -wal or -shm is left")
    }
}
