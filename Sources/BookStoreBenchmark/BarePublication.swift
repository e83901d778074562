import BookStoreService
import NIOCore
import Persistence

/// A publication as the bare handler answers it: the fields and the JSON of the service's
/// `PublicationResource`, read from a row instead of a managed object.
struct BarePublication: Sendable, Encodable, JSONWritable {
    /// The attributes read after `Z_PK`, in the order of the row.
    static let columns = ["title", "price", "firstName", "lastName", "synopsis"]

    var id: Int64
    var title: String
    var price: Double
    var firstName: String?
    var lastName: String?
    var synopsis: String?
    var pageCount: Int

    /// One page of a list, the JSON the service's `ListResponseBody` writes: a keyset page
    /// (`after`) without `offset` and `total`.
    struct List: Sendable, Encodable, JSONWritable {
        var items: [BarePublication]
        var total: Int?
        var limit: Int
        var offset: Int?
        /// The last item's id when the page is full.
        var next: String?

        enum CodingKeys: String, CodingKey { case items, total, limit, offset, next }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(items, forKey: .items)
            try container.encode(limit, forKey: .limit)
            try container.encode(next, forKey: .next)
            try container.encodeIfPresent(offset, forKey: .offset)
            try container.encodeIfPresent(total, forKey: .total)
        }

        /// As the service's `ListResponseBody` writes it.
        func writeJSON(into buffer: inout ByteBuffer) throws {
            buffer.writeStaticString("{\"items\":[")
            for (index, item) in items.enumerated() {
                if index > 0 { buffer.writeStaticString(",") }
                try item.writeJSON(into: &buffer)
            }
            buffer.writeString("],\"limit\":\(limit),\"next\":")
            JSONText.write(next, into: &buffer)
            if let offset { buffer.writeString(",\"offset\":\(offset)") }
            if let total { buffer.writeString(",\"total\":\(total)") }
            buffer.writeStaticString("}")
        }
    }

    /// As the service writes its `PublicationResource`.
    func writeJSON(into buffer: inout ByteBuffer) throws {
        try PublicationResource(
            id: id,
            title: title,
            price: price,
            firstName: firstName,
            lastName: lastName,
            synopsis: synopsis,
            pageCount: pageCount
        )
        .writeJSON(into: &buffer)
    }

    init(_ row: Row, pageCount: Int) {
        id = row[0].int64 ?? 0
        title = row[1].text ?? ""
        // `price` is a Float attribute: its shortest decimal, as the service shows it.
        let price = row[2].double ?? 0
        self.price = Double(Float(price).description) ?? price
        firstName = row[3].text
        lastName = row[4].text
        synopsis = row[5].text
        self.pageCount = pageCount
    }

    enum CodingKeys: String, CodingKey {
        case id, title, price, firstName, lastName, synopsis, pageCount
    }

    // Written out so that empty optional fields appear as `null`, as in the service's JSON.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(price, forKey: .price)
        try container.encode(firstName, forKey: .firstName)
        try container.encode(lastName, forKey: .lastName)
        try container.encode(synopsis, forKey: .synopsis)
        try container.encode(pageCount, forKey: .pageCount)
    }
}
