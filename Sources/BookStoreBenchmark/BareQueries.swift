import Persistence

/// The SQL of the bare handler's routes, named from the store's schema so that it is right
/// on both engines (`ZPUBLICATION` and `?` on SQLite, `zpublication` and `$1` on
/// PostgreSQL): the queries the service needs for the same answers, written by hand.
struct BareQueries: Sendable {
    private let dialect: any SQLDialect
    /// A publication's columns, `Z_PK` first, by primary key.
    private let one: String
    private let pageCount: String
    private let total: String
    /// A window of publications in primary-key order.
    private let window: String
    /// The publications after a key, in primary-key order.
    private let keyset: String
    private let pageTable: String
    private let ownerColumn: String

    init(schema: StoreSchema) {
        let d = schema.dialect
        guard let publication = schema.table(for: "Publication"), let page = schema.table(for: "Page"),
            let owner = page.column(for: "publication")
        else { preconditionFailure("BookStore 5 has Publication and Page") }
        let columns = [d.name("Z_PK")] + BarePublication.columns.map { publication.column(for: $0)!.name }
        let select = "SELECT \(columns.joined(separator: ", ")) FROM \(publication.name)"
        dialect = d
        one = "\(select) WHERE \(d.name("Z_PK")) = \(d.placeholder(1))"
        pageCount = "SELECT count(*) FROM \(page.name) WHERE \(owner.name) = \(d.placeholder(1))"
        total = "SELECT count(*) FROM \(publication.name)"
        window = "\(select) ORDER BY \(d.name("Z_PK")) LIMIT \(d.placeholder(1)) OFFSET \(d.placeholder(2))"
        keyset = "\(select) WHERE \(d.name("Z_PK")) > \(d.placeholder(1)) ORDER BY \(d.name("Z_PK")) LIMIT \(d.placeholder(2))"
        pageTable = page.name
        ownerColumn = owner.name
    }

    /// `GET /publications/{id}`; `nil` when there is no such publication.
    func publication(_ id: Int64, on connection: any DatabaseConnection) throws -> BarePublication? {
        guard let row = try connection.rows(rawSQL: one, [.integer(id)]).first else { return nil }
        let pages = try connection.scalar(rawSQL: pageCount, [.integer(id)])?.int64 ?? 0
        return BarePublication(row, pageCount: Int(pages))
    }

    /// `GET /publications?limit=&offset=`: the window, the total, and the window's page
    /// counts.
    func list(limit: Int, offset: Int, on connection: any DatabaseConnection) throws -> BarePublication.List {
        let total = try connection.scalar(rawSQL: self.total)?.int64 ?? 0
        let rows = try connection.rows(rawSQL: window, [.integer(Int64(limit)), .integer(Int64(offset))])
        var list = try items(rows, limit: limit, on: connection)
        (list.total, list.offset) = (Int(total), offset)
        return list
    }

    /// `GET /publications?limit=&after=`: the publications after the key, in key order,
    /// and their page counts; no total.
    func list(limit: Int, after: Int64, on connection: any DatabaseConnection) throws -> BarePublication.List {
        try items(try connection.rows(rawSQL: keyset, [.integer(after), .integer(Int64(limit))]), limit: limit, on: connection)
    }

    /// The rows of a window with their page counts, in one grouped query as the service counts them.
    private func items(_ rows: [Row], limit: Int, on connection: any DatabaseConnection) throws -> BarePublication.List {
        let ids = rows.compactMap { $0[0].int64 }
        var counts: [Int64: Int] = [:]
        if !ids.isEmpty {
            let placeholders = ids.indices.map { dialect.placeholder($0 + 1) }.joined(separator: ", ")
            let sql = "SELECT \(ownerColumn), count(*) FROM \(pageTable) WHERE \(ownerColumn) IN (\(placeholders)) GROUP BY \(ownerColumn)"
            for row in try connection.rows(rawSQL: sql, ids.map(DatabaseValue.integer)) {
                if let id = row[0].int64, let count = row[1].int64 { counts[id] = Int(count) }
            }
        }
        let items = rows.map { BarePublication($0, pageCount: counts[$0[0].int64 ?? 0] ?? 0) }
        return BarePublication.List(items: items, limit: limit, next: ids.count == limit ? ids.last.map(String.init) : nil)
    }
}
