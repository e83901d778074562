import Persistence

/// A list request's query: window, order and filters, checked before any SQL runs.
///
/// `GET /publications?limit=10&offset=20&sort=lastName,-price&q=book&minPrice=10` becomes
/// a ``FetchRequest`` with bound values; unknown parameters, repeated ones and values that
/// do not parse are a 400 naming each.
///
/// A window starts at `offset` (every row before it is read and skipped) or, a keyset
/// page, `after` a ``ListCursor`` or a row's id, `offset` rows past it: a condition on the
/// order's values, where in id order the primary key's index goes straight to the place,
/// and another order still sorts the matching rows but reads none it skips. Every order
/// ends with the id, so that it is total and a cursor marks one place.
struct ListQuery: Sendable {
    static let defaultLimit = 20
    static let maximumLimit = 100
    /// The furthest a list may skip (a 32-bit count, as both engines take it).
    static let maximumOffset = Int(Int32.max)

    /// A field a list can be sorted by, the key path that sorts it, and what its values are
    /// (for a cursor's).
    struct SortField: Sendable {
        enum Kind: Sendable { case id, text, number, integer }

        let name: String
        let keyPath: String
        let caseInsensitive: Bool
        let kind: Kind

        var isID: Bool { kind == .id }
    }

    /// A field of the order, and its direction.
    struct SortTerm: Sendable {
        let field: SortField
        let ascending: Bool

        var descriptor: FetchRequest.SortDescriptor {
            FetchRequest.SortDescriptor(key: field.keyPath, ascending: ascending, caseInsensitive: field.caseInsensitive)
        }
    }

    var limit = defaultLimit
    var offset = 0
    /// `sort` as the request wrote it ("" without one): what a cursor is made for.
    var sort = ""
    /// The order: the request's terms, then the id where they do not name it.
    var sortTerms: [SortTerm] = [SortTerm(field: idField, ascending: true)]
    /// Where a keyset page starts, as the request named it.
    enum After: Sendable, Hashable {
        /// The `next` of a page: the place itself.
        case cursor(ListCursor)
        /// A row's id: in id order the place itself; in another, the place of the row's
        /// values now (``PublicationRepository`` reads them).
        case id(Int64)
        /// Well formed, but no place in this list: a cursor of another order, or made up
        /// (a 404, as an id that names no row).
        case nowhere
    }

    /// Where a keyset page starts; `nil` for a page at ``offset``.
    var after: After?
    var predicates: [Persistence.Predicate] = []

    static let idField = SortField(name: "id", keyPath: "SELF", caseInsensitive: false, kind: .id)

    static let publicationSortFields = [
        idField,
        SortField(name: "title", keyPath: "title", caseInsensitive: true, kind: .text),
        SortField(name: "price", keyPath: "price", caseInsensitive: false, kind: .number),
        SortField(name: "firstName", keyPath: "firstName", caseInsensitive: true, kind: .text),
        SortField(name: "lastName", keyPath: "lastName", caseInsensitive: true, kind: .text),
        SortField(name: "pageCount", keyPath: "pages.@count", caseInsensitive: false, kind: .integer),
    ]

    static let pageSortFields = [
        idField,
        SortField(name: "number", keyPath: "number", caseInsensitive: false, kind: .integer),
    ]

    static let publicationParameters = ["limit", "offset", "after", "sort", "q", "lastName", "minPrice", "maxPrice"]
    static let pageParameters = ["limit", "offset", "after", "sort"]

    var sortDescriptors: [FetchRequest.SortDescriptor] { sortTerms.map(\.descriptor) }

    /// The terms that decide the order: up to the id, which makes it total.
    var decidingTerms: ArraySlice<SortTerm> {
        sortTerms.prefix { !$0.field.isID } + sortTerms.drop { !$0.field.isID }.prefix(1)
    }

    /// The fields whose values a cursor carries beside the id: the deciding terms before it.
    var cursorFields: [SortField] { sortTerms.prefix { !$0.field.isID }.map(\.field) }

    /// What a keyset page reads of each row to make the next page's cursor.
    var cursorProperties: [FetchRequest.Property] {
        var properties: [FetchRequest.Property] = []
        // A field the sort names twice (`title,-title`) is read once.
        for field in cursorFields where !properties.contains(where: { $0.name == field.name }) {
            properties.append(FetchRequest.Property(field.keyPath, as: field.name))
        }
        return properties
    }

    /// The cursor of `row`, the last of a full page.
    func cursor(after row: FetchedValues) -> ListCursor {
        ListCursor(sort: sort, values: cursorFields.map { row.value(forKey: $0.name) }, id: row.objectID.primaryKey ?? 0)
    }

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
        if let minPrice = reader.number("minPrice") {
            query.predicates.append(try Persistence.Predicate(format: "price >= %@", .value(.double(minPrice))))
        }
        if let maxPrice = reader.number("maxPrice") {
            query.predicates.append(try Persistence.Predicate(format: "price <= %@", .value(.double(maxPrice))))
        }
        try reader.finish()
        try query.refuseNowhere()
        return query
    }

    /// The query of `GET /publications/{id}/pages`.
    static func pages(_ parameters: [(String, String)]) throws -> ListQuery {
        var reader = try QueryReader(parameters, allowed: pageParameters)
        var query = ListQuery()
        query.readWindowAndSort(&reader, fields: pageSortFields)
        try reader.finish()
        try query.refuseNowhere()
        return query
    }

    private mutating func readWindowAndSort(_ reader: inout QueryReader, fields: [SortField]) {
        limit = reader.integer("limit", in: 1...Self.maximumLimit) ?? Self.defaultLimit
        let offset = reader.integer("offset", in: 0...Self.maximumOffset)
        self.offset = offset ?? 0
        if let sort = reader.text("sort", maxLength: TextLimit.filter) {
            self.sort = sort
            var terms: [SortTerm] = []
            for term in sort.split(separator: ",", omittingEmptySubsequences: false) {
                let descending = term.hasPrefix("-")
                let name = descending ? String(term.dropFirst()) : String(term)
                guard let field = fields.first(where: { $0.name == name }) else {
                    reader.refuse(
                        "sort",
                        code: "unknownSortField",
                        "sort: '\(name)' is not a field to sort by; use \(fields.map(\.name).joined(separator: ", ")), each optionally prefixed with '-'"
                    )
                    continue
                }
                terms.append(SortTerm(field: field, ascending: !descending))
            }
            sortTerms = terms.contains { $0.field.isID } ? terms : terms + [SortTerm(field: Self.idField, ascending: true)]
        }
        if let text = reader.text("after", maxLength: TextLimit.cursor) {
            if !ListCursor.isWellFormed(text) {
                reader.refuse("after", code: "invalidCursor", "after must be an id, or the next of a page of this list; got '\(text)'")
            } else if let id = Int64(text), String(id) == text {
                after = ListCursor.isIDOrder(sort) ? .cursor(ListCursor(sort: sort, values: [], id: id)) : .id(id)
            } else if let cursor = ListCursor(text: text, sort: sort, fields: cursorFields) {
                after = .cursor(cursor)
            } else {
                after = .nowhere
            }
        }
    }

    /// A 404 for an `after` that names no place in this list.
    private func refuseNowhere() throws(Problem) {
        guard case .nowhere? = after else { return }
        throw Problem.notFound(
            "after names no place in this list: it is not the next of a page sorted by '\(sort.isEmpty ? "id" : sort)'; start again from the first page"
        )
    }

    /// The rows after ``after`` in the order: for terms k1, k2, … and the cursor's values
    /// v1, v2, …, `k1 > v1 OR (k1 == v1 AND (k2 > v2 OR …))`, with `<` for a descending term,
    /// nil sorting first (as the store sorts it) and the id deciding last.
    private func keysetPredicate(_ cursor: ListCursor) -> Persistence.Predicate {
        func key(_ field: SortField) -> Expression { field.isID ? .evaluatedObject : .keyPath(field.keyPath.split(separator: ".").map(String.init)) }
        func compare(_ field: SortField, _ op: ComparisonOperator, _ value: Expression) -> Persistence.Predicate {
            .comparison(Comparison(key(field), op, value, options: field.caseInsensitive ? .caseInsensitive : []))
        }
        let terms = Array(decidingTerms)
        func after(_ index: Int, _ valueIndex: Int) -> Persistence.Predicate {
            let term = terms[index]
            guard !term.field.isID else {
                return compare(term.field, term.ascending ? .greaterThan : .lessThan, .constant(.integer(cursor.id)))
            }
            let value = cursor.values[valueIndex]
            let rest = after(index + 1, valueIndex + 1)
            let isNil = compare(term.field, .equal, .constant(.null))
            guard !value.isNull else {
                // nil sorts first: after it come the same nil (by the next terms), then,
                // ascending, every value.
                let sameThenRest = Persistence.Predicate.and([isNil, rest])
                return term.ascending ? .or([compare(term.field, .notEqual, .constant(.null)), sameThenRest]) : sameThenRest
            }
            let beyond = compare(term.field, term.ascending ? .greaterThan : .lessThan, .constant(value))
            let sameThenRest = Persistence.Predicate.and([compare(term.field, .equal, .constant(value)), rest])
            return term.ascending ? .or([beyond, sameThenRest]) : .or([beyond, isNil, sameThenRest])
        }
        return after(0, 0)
    }

    /// The fetch request for this query's window of `entityName`, with `extra` conditions.
    /// A keyset page starting after an id in another order than the id's reads the row's
    /// values first (``PublicationRepository``): here it starts after nothing.
    func fetchRequest(entityName: String, extra: [Persistence.Predicate] = []) -> FetchRequest {
        let window: [Persistence.Predicate] = if case .cursor(let cursor)? = after { [keysetPredicate(cursor)] } else { [] }
        return FetchRequest(
            entityName: entityName,
            predicate: predicate(extra + window),
            sortDescriptors: sortDescriptors,
            fetchLimit: limit,
            fetchOffset: offset
        )
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
