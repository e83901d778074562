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

    /// A read-only look (a migration's check of the store's version, `persistence inspect`)
    /// that the store's last writer closes under: the look is then the last connection to
    /// close, and the store must still end as one file holding every row, or a copy of the
    /// file alone would miss what is left in the log.
    @Test func aLookThatOutlivesTheLastWriterLeavesOnlyTheStoreFile() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        let model = try LibraryModel.make()
        try await makeClosedStore(at: path, model: model) { container in
            let context = container.newContext()
            try context.insertObject(entityName: "Book").setValue("First", forKey: "title")
            try await context.save()
        }
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        try writer.execute("PRAGMA journal_mode = WAL")
        // The look reads while the writer commits, so the commit stays in the log, and the
        // writer closes while the look still has the store open.
        let look = try SQLiteConnection(readingStoreAt: path)
        let seen = try look.scalar("SELECT count(*) FROM ZBOOK")?.int64
        #expect(throws: DatabaseError.self, "a look writes no row") { try look.execute("UPDATE ZBOOK SET ZTITLE = 'Look'") }
        try writer.execute("UPDATE ZBOOK SET ZTITLE = 'Second'")
        writer.close()
        look.close()
        #expect(seen == 1)
        let folder = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["store.sqlite"], "no -wal or -shm is left")
        let file = try SQLiteConnection(path: SQLiteReadOnlyView.immutableURI(for: path), mode: .readOnly)
        #expect(try file.scalar("SELECT ZTITLE FROM ZBOOK")?.text == "Second", "the store file alone holds the last commit")
    }
}
