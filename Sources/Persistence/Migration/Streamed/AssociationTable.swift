/// The source → destination association of a running migration, kept in the destination
/// store so memory does not grow with rows: one row per pair, by entity mapping name.
///
/// It lives while a mapping model runs — while a ``ProgressiveMigrator``'s step runs, for
/// its later mapping models' look-ups — and is dropped when that succeeds (a failed run's
/// destination store is thrown away with it).
struct AssociationTable: Sendable {
    let database: any Database

    private var d: any SQLDialect { database.dialect }
    private var table: String { d.name("Z_MIGRATIONASSOCIATION") }
    private var mapping: String { d.name("Z_MAPPING") }
    private var source: String { d.name("Z_SOURCE") }
    private var destination: String { d.name("Z_DESTINATION") }
    private var key: String { d.name("Z_PK") }

    func create() async throws {
        let (table, key, mapping, source, destination): (SQL, SQL, SQL, SQL, SQL) = (
            "\(identifier: table)", "\(identifier: key)", "\(identifier: mapping)", "\(identifier: source)", "\(identifier: destination)"
        )
        let sql: SQL = """
            CREATE TABLE IF NOT EXISTS \(table) (\(key) \(raw: d.generatedKeyColumnType), \(mapping) VARCHAR NOT NULL, \(source) INTEGER NOT NULL, \(destination) INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS \(storeName: "Z_MIGRATIONASSOCIATION_SOURCE") ON \(table) (\(mapping), \(source));
            CREATE INDEX IF NOT EXISTS \(storeName: "Z_MIGRATIONASSOCIATION_DESTINATION") ON \(table) (\(mapping), \(destination))
            """
        try await database.writeWithoutTransaction { try $0.execute(sql) }
    }

    func drop() async throws {
        let sql: SQL = "DROP TABLE IF EXISTS \(identifier: table)"
        try await database.writeWithoutTransaction { try $0.execute(sql) }
    }

    /// Records pairs of (mapping, source Z_PK, destination Z_PK) on `connection`, in the
    /// transaction that saves the batch they belong to.
    func insert(_ pairs: [(mapping: String, source: Int64, destination: Int64)], on connection: any DatabaseConnection) throws {
        guard !pairs.isEmpty else { return }
        let rows = pairs.map { [DatabaseValue.text($0.mapping), .integer($0.source), .integer($0.destination)] }
        try connection.insertRows(into: table, columns: [mapping, source, destination], rows: rows)
    }

    /// The destination keys of each source key, for one mapping.
    func destinations(mapping name: String, sources keys: [Int64]) async throws -> [Int64: [Int64]] {
        try await lookup(mapping: name, column: source, other: destination, keys: keys)
    }

    /// The source keys of each destination key, for one mapping.
    func sources(mapping name: String, destinations keys: [Int64]) async throws -> [Int64: [Int64]] {
        try await lookup(mapping: name, column: destination, other: source, keys: keys)
    }

    private func lookup(mapping name: String, column: String, other: String, keys: [Int64]) async throws -> [Int64: [Int64]] {
        var result: [Int64: [Int64]] = [:]
        for chunk in d.statementChunks(keys, reserved: 1, limit: 500) {
            let sql: SQL = """
                SELECT \(identifier: column), \(identifier: other) FROM \(identifier: table) WHERE \(identifier: mapping) = \(name) \
                AND \(identifier: column) IN (\(list: chunk.map(DatabaseValue.integer))) ORDER BY \(identifier: key)
                """
            let rows = try await database.read { try $0.rows(sql) }
            for row in rows {
                if let k = row[0].int64, let v = row[1].int64 { result[k, default: []].append(v) }
            }
        }
        return result
    }

    /// Up to `limit` pairs of a mapping after the association row `after`, in order:
    /// (row key, source key, destination key).
    func pairs(mapping name: String, after row: Int64, limit: Int) async throws -> [(row: Int64, source: Int64, destination: Int64)] {
        let sql: SQL = """
            SELECT \(identifier: key), \(identifier: source), \(identifier: destination) FROM \(identifier: table) \
            WHERE \(identifier: mapping) = \(name) AND \(identifier: key) > \(row) ORDER BY \(identifier: key) LIMIT \(literal: limit)
            """
        let rows = try await database.read { try $0.rows(sql) }
        return rows.compactMap { row in
            guard let k = row[0].int64, let s = row[1].int64, let t = row[2].int64 else { return nil }
            return (k, s, t)
        }
    }

    /// How many pairs a mapping has.
    func count(mapping name: String) async throws -> Int {
        let sql: SQL = "SELECT count(*) FROM \(identifier: table) WHERE \(identifier: mapping) = \(name)"
        return Int(try await database.read { try $0.scalar(sql) }?.int64 ?? 0)
    }
}
