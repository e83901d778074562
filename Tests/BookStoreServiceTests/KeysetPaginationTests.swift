import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PersistenceTesting
import Testing

@testable import BookStoreService

/// Keyset pages (`after=<next>`): walked to the end in every order, they give the rows of
/// the whole list in its order, once each, on every engine; a cursor outlives its row.
@Suite("keyset pagination")
struct KeysetPaginationTests {
    /// Publications shaped like users' data: equal prices, prices with cents, titles that
    /// differ in case only, non-ASCII, no author, and several page counts.
    static let publications: [String] =
        [
            #"{"title": "alpha", "price": 9.99, "firstName": "Ana", "lastName": "Ñúñez"}"#,
            #"{"title": "Alpha", "price": 9.99, "firstName": "ana", "lastName": "ñúñez"}"#,
            #"{"title": "ALPHA", "price": 9.99}"#,
            #"{"title": "Éclair", "price": 0.01, "lastName": "Zürich"}"#,
            #"{"title": "éclair", "price": 0, "firstName": "Zoë"}"#,
            #"{"title": "Zürich", "price": 1000}"#,
            #"{"title": "中文书", "price": 12.5, "firstName": "李", "lastName": "王"}"#,
            #"{"title": "Ünter", "price": 12.5, "lastName": "Doe"}"#,
            #"{"title": "beta", "price": 12.5, "firstName": "Jo", "lastName": "doe"}"#,
        ]
        + (1...24).map {
            #"{"title": "Book \#($0 % 5)", "price": \#(Double($0 % 4) * 2.25), "lastName": \#($0 % 3 == 0 ? "null" : "\"Name\($0 % 2)\"")}"#
        }

    static let sorts = [
        "", "id", "-id", "title", "-title", "-price,title", "price,-id", "lastName,firstName", "-lastName", "-firstName,title",
        "pageCount,-price", "-pageCount", "title,id,price", "title,-title,price,price",
    ]

    @Test(arguments: RouteStore.allCases)
    func walkingKeysetPagesGivesTheWholeListInItsOrder(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            for (index, body) in Self.publications.enumerated() {
                let created = try await client.send(.post, "/publications", json: body)
                #expect(created.status == .created, "\(body): \(created.text)")
                let id = try #require(created.json["id"]?.int)
                for _ in 0..<(index % 4) { _ = try await client.send(.post, "/publications/\(id)/pages", json: #"{"text": "p"}"#) }
            }
            for sort in Self.sorts {
                let sortQuery = sort.isEmpty ? "" : "&sort=\(sort)"
                let whole = try await client.send(.get, "/publications?limit=100\(sortQuery)").json
                let expected = whole["items"]?.array.compactMap { $0["id"]?.int } ?? []
                #expect(expected.count == Self.publications.count + 4 && whole["total"]?.int == expected.count, "\(sort)")
                for filter in ["", "&minPrice=2&maxPrice=20"] {
                    let wanted =
                        filter.isEmpty ? expected : Self.ids(try await client.send(.get, "/publications?limit=100\(sortQuery)\(filter)").json)
                    let walked = try await Self.walk(client, "/publications?limit=7\(sortQuery)\(filter)")
                    #expect(walked == wanted, "sort '\(sort)'\(filter): keyset \(walked) against offset \(wanted)")
                }
            }
            // The offset list's own order is the one asked for: here checked by hand.
            let byPrice = try await client.send(.get, "/publications?limit=100&sort=-price,id").json["items"]?.array ?? []
            let pairs = byPrice.map { (price: $0["price"]?.number ?? -1, id: $0["id"]?.int ?? 0) }
            #expect(pairs.map(\.id) == pairs.sorted { $0.price != $1.price ? $0.price > $1.price : $0.id < $1.id }.map(\.id))
            // And by title, the order computed here from the rows' titles (mixed case,
            // accented, CJK): case folded, then by code point, ties by id.
            let rows = (try await client.send(.get, "/publications?limit=100&sort=id").json["items"]?.array ?? [])
                .map { (id: $0["id"]?.int ?? 0, title: $0["title"]?.string ?? "") }
            #expect(rows.count == Self.publications.count + 4)
            for (sort, descending) in [("title", false), ("-title", true)] {
                let expected = rows.sorted { a, b in
                    let (x, y) = (a.title.lowercased().unicodeScalars.map(\.value), b.title.lowercased().unicodeScalars.map(\.value))
                    if x != y { return descending ? y.lexicographicallyPrecedes(x) : x.lexicographicallyPrecedes(y) }
                    return a.id < b.id
                }.map(\.id)
                let listed = Self.ids(try await client.send(.get, "/publications?limit=100&sort=\(sort)").json)
                #expect(listed == expected, "sort '\(sort)': listed \(listed), by the titles \(expected)")
                let walked = try await Self.walk(client, "/publications?limit=7&sort=\(sort)")
                #expect(walked == expected, "sort '\(sort)': walked \(walked), by the titles \(expected)")
            }
        }
    }

    /// The longest values a row may hold, in the worst characters for a cursor's JSON
    /// (4-byte, escaped), make a cursor that `after` still takes.
    @Test(arguments: RouteStore.allCases)
    func theCursorOfTheLongestValuesIsTakenBack(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            // Each piece is one character of the stored text, written in the body's JSON.
            for (index, piece) in ["𝄞", "\\\"", "\\u0001", "é"].enumerated() {
                func text(_ length: Int) -> String { String(repeating: piece, count: length - 1) + String(index) }
                let body = #"{"title": "\#(text(TextLimit.title))", "firstName": "\#(text(TextLimit.name))", "lastName": "\#(text(TextLimit.name))"}"#
                let created = try await client.send(.post, "/publications", json: body)
                #expect(created.status == .created, "\(created.text.prefix(300))")
            }
            for sort in ["title", "lastName,firstName,title", "-firstName,-title"] {
                let expected = Self.ids(try await client.send(.get, "/publications?limit=100&sort=\(sort)").json)
                let walked = try await Self.walk(client, "/publications?limit=2&sort=\(sort)")
                #expect(walked == expected && expected.count == 8, "\(sort)")
            }
        }
    }

    @Test(arguments: RouteStore.allCases)
    func aPublicationsPagesPageByKeysetToo(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            for number in [5, 3, 3, 9, 1, 7, 7, 7, 2, 8, 4] {
                _ = try await client.send(.post, "/publications/1/pages", json: #"{"number": \#(number), "text": "n\#(number)"}"#)
            }
            for sort in ["", "-number", "number,-id", "number,number"] {
                let sortQuery = sort.isEmpty ? "" : "&sort=\(sort)"
                let expected = Self.ids(try await client.send(.get, "/publications/1/pages?limit=100\(sortQuery)").json)
                let walked = try await Self.walk(client, "/publications/1/pages?limit=4\(sortQuery)")
                #expect(walked == expected && expected.count == 14, "\(sort): \(walked) against \(expected)")
            }
        }
    }

    @Test(arguments: RouteStore.allCases)
    func aCursorOutlivesItsRowAnIdWorksInEveryOrderAndAWrongOneIsRefused(_ backend: RouteStore) async throws {
        try await withReadyService(backend) { client in
            for body in Self.publications.prefix(9) { _ = try await client.send(.post, "/publications", json: body) }
            let expected =
                try await client.send(.get, "/publications?limit=100&sort=-price,title").json["items"]?.array.compactMap { $0["id"]?.int } ?? []
            let first = try await client.send(.get, "/publications?limit=5&sort=-price,title").json
            let next = try #require(first["next"]?.string)
            let last = try #require(first["items"]?.array.last?["id"]?.int)
            // After a row's id, in any order: after its values; with offset 0, the default, too.
            let afterID = Self.ids(try await client.send(.get, "/publications?limit=100&sort=-price,title&offset=0&after=\(last)").json)
            #expect(afterID == Array(expected.dropFirst(5)))
            // The row the cursor was made from goes; the place stays, and its id names nothing.
            #expect(try await client.send(.delete, "/publications/\(last)").status == .noContent)
            let rest = Self.ids(try await client.send(.get, "/publications?limit=100&sort=-price,title&after=\(next)").json)
            #expect(rest == Array(expected.dropFirst(5)))
            expectProblem(try await client.send(.get, "/publications?sort=-price,title&after=\(last)"), .notFound)

            // Not the shape the document gives (an id, or a cursor): 400.
            // An offset beside a cursor skips that many rows past it.
            let skipped = Self.ids(try await client.send(.get, "/publications?sort=-price,title&after=\(next)&offset=2&limit=100").json)
            #expect(skipped == Array(expected.dropFirst(7)))
            for query in ["after=abc", "after=-1", "after=01", "after=", "after=eyJ%2B", "after=1.5"] {
                #expect(!ListCursor.isWellFormed(String(query.dropFirst("after=".count))), "\(query)")
                expectProblem(try await client.send(.get, "/publications?\(query)"), .badRequest, fields: ["after"])
            }
            expectProblem(try await client.send(.get, "/publications/1/pages?after=x"), .badRequest, fields: ["after"])
            // Well formed, but no place in this list: a cursor of another order, a made-up
            // one, one whose text holds NUL (which no stored text does), an id beyond any: 404.
            let json = #"{"id":"1","sort":"title","values":["a\u0000b"]}"#
            let handMade = Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            for query in [
                "after=\(next)&sort=title", "after=\(next)", "after=eyJzzzz", "sort=title&after=\(handMade)", "sort=title&after=9999999999999999999",
            ] {
                expectProblem(try await client.send(.get, "/publications?\(query)"), .notFound)
            }
            // A page that is not full has no next.
            let short = try await client.send(.get, "/publications?limit=100").json
            #expect(short["next"] == .null)
        }
    }

    /// A page read whole (up to the default limit) goes out in one piece with its length;
    /// a longer one is written batch by batch as it is read, without one. Both hold the
    /// same items in the same order where they overlap.
    @Test(arguments: TestEngine.allCases)
    func aShortPageGoesWithItsLengthALongOneInBatches(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await seed(url, version: 5)
            try await makeService(url).makeApplication().test(.live) { client in
                try await waitUntilReady(client)
                for body in Self.publications {
                    #expect(try await client.send(.post, "/publications", json: body).status == .created)
                }
                var items: [String: [JSONValue]] = [:]
                for (uri, rows, sentWhole) in [
                    ("/publications?limit=20", 20, true), ("/publications?limit=3&after=2", 3, true),
                    ("/publications?limit=25", 25, false), ("/publications?limit=25&after=3", 25, false),
                ] {
                    let response = try await client.send(.get, uri)
                    items[uri] = response.json["items"]?.array
                    #expect(response.status == .ok, "\(uri): \(response.text)")
                    #expect(response.json["items"]?.array.count == rows, "\(uri)")
                    let length = response.headers[.contentLength]
                    if sentWhole {
                        #expect(length == String(response.body.readableBytes), "\(uri): Content-Length \(length ?? "none")")
                        #expect(response.headers[.transferEncoding] == nil, "\(uri)")
                    } else {
                        #expect(length == nil && response.headers[.transferEncoding] == "chunked", "\(uri): \(response.headers)")
                    }
                }
                // The same items either way: the whole page is the streamed one's first rows.
                let whole = items["/publications?limit=20"] ?? []
                let streamed = items["/publications?limit=25"] ?? []
                #expect(!whole.isEmpty && whole == Array(streamed.prefix(whole.count)))
                let wholeAfter = items["/publications?limit=3&after=2"] ?? []
                let streamedAfter = items["/publications?limit=25&after=3"] ?? []
                #expect(!wholeAfter.isEmpty && Array(wholeAfter.dropFirst()) == Array(streamedAfter.prefix(2)))
            }
        }
    }

    /// The IDs of every page of the list at `uri` (its query holds `limit`), the first and
    /// then each after the one before's `next`: keyset pages, each a 200 without `offset`
    /// and `total`.
    static func walk(_ client: some TestClientProtocol, _ uri: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Int] {
        var page = try await client.send(.get, uri).json
        var walked = ids(page)
        while let next = page["next"]?.string, walked.count <= 500 {
            let response = try await client.send(.get, "\(uri)&after=\(next)")
            #expect(response.status == .ok, "\(uri): \(response.text.prefix(300))", sourceLocation: sourceLocation)
            page = response.json
            #expect(page["total"] == nil && page["offset"] == nil && page["limit"] != nil, "\(uri)", sourceLocation: sourceLocation)
            walked += ids(page)
        }
        return walked
    }

    /// The IDs of a page's items, in order.
    static func ids(_ page: JSONValue) -> [Int] {
        page["items"]?.array.compactMap { $0["id"]?.int } ?? []
    }
}

/// The document's pattern for `after` and the service's check of its shape agree.
@Suite("keyset cursor shape")
struct KeysetCursorShapeTests {
    @Test func theDocumentsPatternIsTheShapeTheServiceTakes() throws {
        let pattern = try Regex(ListCursor.pattern)
        let cursor = ListCursor(sort: "-price,title", values: [.double(9.99), .string("Ñ \"q\"")], id: 7).text
        for text in [
            "0", "1", "42", "9223372036854775807", "9999999999999999999", cursor, "eyJ", "eyJa", "eyJ_-",
            "", "00", "01", "-1", "1.5", "abc", "eyJ+", "eyJ=", "1e3", "10000000000000000000", " 1",
        ] {
            #expect((text.wholeMatch(of: pattern) != nil) == ListCursor.isWellFormed(text), "'\(text)'")
        }
        #expect(ListCursor.isWellFormed(cursor))
    }
}
