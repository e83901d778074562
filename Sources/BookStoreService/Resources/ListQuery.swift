import Persistence

/// A list request's query: window, order and filters, checked before any SQL runs.
///
/// `GET /publications?limit=10&offset=20&sort=lastName,-price&q=book&minPrice=10` becomes
/// a ``FetchRequest`` with bound values; unknown parameters, repeated ones and values that
/// do not parse are a 400 naming each.
struct ListQuery: Sendable {
    static let defaultLimit = 20
    static let maximumLimit = 100
    /// The furthest a list may skip (a 32-bit count, as both engines take it).
    static let maximumOffset = Int(Int32.max)

    /// A field a list can be sorted by, and the key path that sorts it.
    struct SortField: Sendable {
        let name: String
        let keyPath: String
        let caseInsensitive: Bool
    }

    var limit = defaultLimit
    var offset = 0
    var sortDescriptors: [FetchRequest.SortDescriptor] = []
    var predicates: [Persistence.Predicate] = []

    static let publicationSortFields = [
        SortField(name: "id", keyPath: "SELF", caseInsensitive: false),
        SortField(name: "title", keyPath: "title", caseInsensitive: true),
        SortField(name: "price", keyPath: "price", caseInsensitive: false),
        SortField(name: "firstName", keyPath: "firstName", caseInsensitive: true),
        SortField(name: "lastName", keyPath: "lastName", caseInsensitive: true),
        SortField(name: "pageCount", keyPath: "pages.@count", caseInsensitive: false),
    ]

    static let pageSortFields = [
        SortField(name: "id", keyPath: "SELF", caseInsensitive: false),
        SortField(name: "number", keyPath: "number", caseInsensitive: false),
    ]

    static let publicationParameters = ["limit", "offset", "sort", "q", "lastName", "minPrice", "maxPrice"]
    static let pageParameters = ["limit", "offset", "sort"]

    /// The query of `GET /publications`.
    ///
    /// - Throws: ``Problem`` (400) naming every parameter that is unknown, repeated or
    ///   does not parse.
    static func publications(_ parameters: [(String, String)]) throws -> ListQuery {
        var reader = try QueryReader(parameters, allowed: publicationParameters)
        var query = ListQuery()
        query.readWindowAndSort(&reader, fields: publicationSortFields)
        if let text = reader.text("q", maxLength: TextLimit.filter) {
            query.predicates.append(try Persistence.Predicate(format: "title CONTAINS[c] %@", .string(text)))
        }
        if let lastName = reader.text("lastName", maxLength: TextLimit.filter) {
            query.predicates.append(try Persistence.Predicate(format: "lastName ==[c] %@", .string(lastName)))
        }
        // Bounds that cross (maxPrice below minPrice) are a range nothing is in, as the
        // document allows them: an empty list, not a refusal.
        if let minPrice = reader.number("minPrice") { query.predicates.append(try Persistence.Predicate(format: "price >= %@", .value(.double(minPrice)))) }
        if let maxPrice = reader.number("maxPrice") { query.predicates.append(try Persistence.Predicate(format: "price <= %@", .value(.double(maxPrice)))) }
        try reader.finish()
        return query
    }

    /// The query of `GET /publications/{id}/pages`.
    static func pages(_ parameters: [(String, String)]) throws -> ListQuery {
        var reader = try QueryReader(parameters, allowed: pageParameters)
        var query = ListQuery()
        query.readWindowAndSort(&reader, fields: pageSortFields)
        try reader.finish()
        return query
    }

    private mutating func readWindowAndSort(_ reader: inout QueryReader, fields: [SortField]) {
        limit = reader.integer("limit", in: 1...Self.maximumLimit) ?? Self.defaultLimit
        offset = reader.integer("offset", in: 0...Self.maximumOffset) ?? 0
        if let sort = reader.text("sort", maxLength: TextLimit.filter) {
            for term in sort.split(separator: ",", omittingEmptySubsequences: false) {
                let descending = term.hasPrefix("-")
                let name = descending ? String(term.dropFirst()) : String(term)
                guard let field = fields.first(where: { $0.name == name }) else {
                    reader.refuse("sort", code: "unknownSortField",
                                  "sort: '\(name)' is not a field to sort by; use \(fields.map(\.name).joined(separator: ", ")), each optionally prefixed with '-'")
                    continue
                }
                sortDescriptors.append(FetchRequest.SortDescriptor(key: field.keyPath, ascending: !descending, caseInsensitive: field.caseInsensitive))
            }
        }
    }

    /// The fetch request for this query's window of `entityName`, with `extra` conditions.
    func fetchRequest(entityName: String, extra: [Persistence.Predicate] = []) -> FetchRequest {
        FetchRequest(entityName: entityName, predicate: predicate(extra), sortDescriptors: sortDescriptors,
                     fetchLimit: limit, fetchOffset: offset)
    }

    /// The request for those of `ids` that match this query's filters (and `extra`), whatever
    /// their order: a batch of a list whose IDs were read first.
    func batchRequest(entityName: String, ids: [ObjectID], extra: [Persistence.Predicate] = []) -> FetchRequest {
        let among = Persistence.Predicate.comparison(Comparison(.keyPath(["SELF"]), .in, .aggregate(ids.map(Expression.object))))
        return FetchRequest(entityName: entityName, predicate: predicate(extra + [among]))
    }

    /// The request that counts every match, without the window.
    func countRequest(entityName: String, extra: [Persistence.Predicate] = []) -> FetchRequest {
        FetchRequest(entityName: entityName, predicate: predicate(extra))
    }

    private func predicate(_ extra: [Persistence.Predicate]) -> Persistence.Predicate? {
        let all = predicates + extra
        return all.count > 1 ? .and(all) : all.first
    }
}
