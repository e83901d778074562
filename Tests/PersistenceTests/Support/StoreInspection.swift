import Foundation
import Testing

@testable import Persistence

/// Raw SQL access to a container's store, for checking what a save really wrote.
///
/// The SQL is written as for SQLite: Core Data's upper-case names (PostgreSQL folds
/// unquoted names to the lower-case ones it stores) and `?` placeholders, numbered `$1`,
/// `$2`, … on PostgreSQL.
extension PersistentContainer {
    /// The rows of a query, read on the store's own connections.
    func sql(_ sql: String, _ arguments: [DatabaseValue] = []) async throws -> [Row] {
        let sql = store.schema.dialect.numberingPlaceholders(sql)
        return try await store.database.read { try $0.rows(rawSQL: sql, arguments) }
    }

    /// The first column of the first row as an integer.
    func int(_ sql: String, _ arguments: [DatabaseValue] = []) async throws -> Int64? {
        let sql = store.schema.dialect.numberingPlaceholders(sql)
        return try await store.database.read { try $0.scalar(rawSQL: sql, arguments)?.int64 }
    }

    /// Every table's rows, each rendered as text and sorted: a content dump of the store
    /// that two states can be compared by.
    func dump() async throws -> [String: [String]] {
        let tablesSQL = store.schema.dialect.tableListingQuery
        return try await store.database.read { connection in
            let tables = try connection.rows(tablesSQL).compactMap { $0[0].text }
            var result: [String: [String]] = [:]
            for table in tables {
                result[table] = try connection.rows(rawSQL: "SELECT * FROM \(table)").map { row in
                    row.values.map { "\($0)" }.joined(separator: "|")
                }.sorted()
            }
            return result
        }
    }

    /// `Z_MAX` of an entity's `Z_PRIMARYKEY` row.
    func zMax(_ entityName: String) async throws -> Int64? {
        try await int("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = ?", [.text(entityName)])
    }

    /// The number of rows of a table.
    func count(_ table: String) async throws -> Int64 {
        try await int("SELECT count(*) FROM \(table)") ?? -1
    }
}

/// The file system state of a store file: its bytes, modification time and the folder's files.
struct FileSnapshot: Equatable {
    let bytes: Data
    let modificationDate: Date?
    let folder: [String]

    init(path: String) throws {
        bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        modificationDate = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        folder = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent).sorted()
    }
}

/// Expects the file at `path` to be as `before` found it: bytes, modification time, and no
/// new files beside it (reading metadata must not leave `-wal`/`-shm` files either).
func expectUnchanged(_ path: String, since before: FileSnapshot, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let after = try FileSnapshot(path: path)
    #expect(after.bytes == before.bytes, "bytes changed", sourceLocation: sourceLocation)
    #expect(after.modificationDate == before.modificationDate, "modification time changed", sourceLocation: sourceLocation)
    #expect(after.folder == before.folder, "files appeared or vanished beside the store", sourceLocation: sourceLocation)
}

/// A fresh folder for a store file, removed by the returned clean-up.
func makeStoreFolder() -> (path: String, cleanUp: @Sendable () -> Void) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistence-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (directory.appendingPathComponent("store.sqlite").path, { try? FileManager.default.removeItem(at: directory) })
}

/// Creates a store file at `path` for `model`, lets `body` fill it, then checkpoints and
/// closes it, so the whole store is in the one file.
func makeClosedStore(at path: String, model: ManagedObjectModel, _ body: (PersistentContainer) async throws -> Void = { _ in }) async throws {
    do {
        let container = try await PersistentContainer.open(model: model, store: .sqlite(path), options: .createIfMissing, logger: testLogger)
        try await body(container)
        let database = try #require(container.store.engineDatabase as? SQLiteDatabase)
        try await database.checkpoint()
    }
    // The container is gone: its connections close and SQLite removes the WAL files.
    try await waitUntilWriteAheadLogIsRemoved(path)
}

/// Waits until SQLite has removed the store's `-wal` file, which it does when the last
/// connection closes (connections close on their own threads once their database is let
/// go); records an issue naming what was awaited when that has not happened within a
/// minute, however busy the machine.
func waitUntilWriteAheadLogIsRemoved(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while FileManager.default.fileExists(atPath: path + "-wal"), ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
    }
    if FileManager.default.fileExists(atPath: path + "-wal") {
        Issue.record("waited a minute for the last connection to \(path) to close and SQLite to remove its -wal file", sourceLocation: sourceLocation)
    }
}

/// The titles of objects, as a set.
func titles(_ objects: [ManagedObject], key: String = "title") -> [String] {
    objects.map { $0.value(forKey: key).stringValue ?? "<nil>" }
}
