import Persistence

/// Whether two stores of one model hold the same rows: every entity table read in
/// primary-key order, a chunk at a time, and compared column by column (`Z_OPT`, the
/// optimistic-locking counter, aside).
struct StoreComparison {
    let backend: any BenchmarkBackend
    let model: ManagedObjectModel
    static let chunk = 20_000

    /// `nil` when both stores hold the same rows; otherwise the first difference.
    func difference(_ first: StoreURL, _ second: StoreURL) async throws -> String? {
        let a = try await backend.openDatabase(first)
        let b = try await backend.openDatabase(second)
        defer {
            Task {
                await a.close()
                await b.close()
            }
        }
        let schema = StoreSchema(model: model, dialect: backend.dialect)
        let d = schema.dialect
        for table in schema.rootTables {
            let columns = [d.name("Z_PK"), d.name("Z_ENT")] + table.allColumns.map(\.name)
            var last: Int64 = 0
            while true {
                let sql =
                    "SELECT \(columns.joined(separator: ", ")) FROM \(table.name) WHERE \(d.name("Z_PK")) > \(d.placeholder(1)) ORDER BY \(d.name("Z_PK")) LIMIT \(Self.chunk)"
                let arguments = [DatabaseValue.integer(last)]
                let rowsA = try await a.read { try $0.rows(rawSQL: sql, arguments) }
                let rowsB = try await b.read { try $0.rows(rawSQL: sql, arguments) }
                if rowsA.count != rowsB.count {
                    return "\(table.name) has \(rowsA.count) rows after Z_PK \(last) in the framework's store, \(rowsB.count) in the rebuilt one"
                }
                for (rowA, rowB) in zip(rowsA, rowsB) where rowA != rowB {
                    let differing = columns.indices.filter { rowA[$0] != rowB[$0] }.map { columns[$0] }
                    return
                        "\(table.name) row Z_PK \(rowA[0].int64 ?? 0) differs in \(differing.joined(separator: ", ")): \(rowA.values) against \(rowB.values)"
                }
                guard let end = rowsA.last?[0].int64 else { break }
                last = end
            }
        }
        return nil
    }
}
