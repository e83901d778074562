import Foundation

extension PersistentStore {
    /// Every table of the store at `url` with its number of rows, in name order, read
    /// without a model and without writing anything: what a store holds when its model is
    /// not at hand (`persistence inspect` without `--models`).
    ///
    /// ```swift
    /// for (table, rows) in try await PersistentStore.tables(at: url) { print(table, rows) }
    /// // ZPOST 1001, Z_METADATA 1, Z_MODELCACHE 1, Z_PRIMARYKEY 1
    /// ```
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    public static func tables(at url: StoreURL) async throws -> [(name: String, rows: Int)] {
        @Sendable func count(_ names: [String], on connection: any DatabaseConnection) throws -> [(name: String, rows: Int)] {
            try names.map { name in
                let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                return (name, Int(try connection.scalar("SELECT count(*) FROM \(quoted)")?.int64 ?? 0))
            }
        }
        switch url.kind {
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else {
                throw StoreError(.storeNotFound, "there is no store at \(path)", hint: "check the path", store: url.description)
            }
            do {
                let connection = try SQLiteConnection(path: SQLiteStoreFile.readOnlyURI(for: path), mode: .readOnly)
                let names = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
                    .compactMap { $0[0].text }
                return try count(names, on: connection)
            } catch let error as DatabaseError {
                throw StoreError(.database, "cannot read the tables of the store at \(path)", hint: "check that it is a SQLite file and readable", store: url.description, underlying: error)
            }
        case .postgres(let configuration):
            let database = try await PostgresDatabase.open(configuration, readerCount: 0, readOnly: true)
            do {
                let result = try await database.read { connection in
                    let names = try connection.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name")
                        .compactMap { $0[0].text }
                    return try count(names, on: connection)
                }
                await database.close()
                return result
            } catch {
                await database.close()
                throw error
            }
        case .memory:
            throw StoreError(.unsupported, "an in-memory store has no tables until it is opened", hint: "inspect a sqlite:// or postgres:// store", store: url.description)
        }
    }
}
