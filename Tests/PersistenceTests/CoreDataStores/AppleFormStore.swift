import Foundation
import Testing

@testable import Persistence

/// A SQLite store written by hand in the exact form Apple's Core Data writes, for layouts no
/// fixture has: the test gives the entity tables' `CREATE` statements and rows as Core Data
/// would write them; this adds Core Data's bookkeeping tables and a metadata plist of
/// Apple's (no version name of ours, no version hashes: the store is known by its tables).
enum AppleFormStore {
    /// Writes the store at `path`: `statements` (tables, indexes, rows), `Z_PRIMARYKEY` with
    /// `entities` (number, name, super, max), `Z_METADATA`, `Z_MODELCACHE`.
    static func write(at path: String, statements: [String], entities: [(number: Int, name: String, superNumber: Int, max: Int)]) throws {
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        defer { connection.close() }
        // Core Data keeps its stores in WAL mode.
        try connection.execute("PRAGMA journal_mode=WAL")
        for statement in statements { try connection.execute(rawSQL: statement) }
        try connection.execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        for entity in entities {
            try connection.run(
                rawSQL: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                [.integer(Int64(entity.number)), .text(entity.name), .integer(Int64(entity.superNumber)), .integer(Int64(entity.max))]
            )
        }
        try connection.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        let uuid = UUID().uuidString
        let plist: [String: Any] = [
            "NSStoreType": "SQLite", "NSStoreUUID": uuid, "NSStoreModelVersionHashes": [String: Data](),
            "NSStoreModelVersionHashesVersion": 3, "NSStoreModelVersionIdentifiers": [""], "NSPersistenceFrameworkVersion": 1523,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try connection.run(rawSQL: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", [.text(uuid), .blob(data)])
        try connection.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
    }
}
