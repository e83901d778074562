import Hummingbird
import NIOCore
import Persistence

/// A publication as the API shows it: `BookStore 5`'s `Publication` with its primary key
/// as `id` and the number of its pages.
///
/// ```json
/// {"id": 1, "title": "The first book", "price": 22, "firstName": "Bill", "lastName": "Smith",
///  "synopsis": "The first book", "pageCount": 3}
/// ```
public struct PublicationResource: Sendable, Hashable, ResponseEncodable, JSONWritable {
    /// The publication's primary key (`Z_PK`): its id in the API's paths.
    public var id: Int64
    /// The title.
    public var title: String
    /// The price, shown as the shortest decimal of the `Float` the model keeps.
    public var price: Double
    /// The author's first name; `null` when there is none.
    public var firstName: String?
    /// The author's last name; `null` when there is none.
    public var lastName: String?
    /// A short description; `null` when there is none.
    public var synopsis: String?
    /// The number of the publication's pages.
    public var pageCount: Int

    /// What ``init(_:)-(FetchedValues)`` reads: the attributes and the number of pages.
    static let properties: [FetchRequest.Property] = ["title", "price", "firstName", "lastName", "synopsis", .init("pages.@count", as: "pageCount")]

    /// A publication read without making its object (``properties``).
    init(_ values: FetchedValues) {
        self.init(
            id: values.objectID.primaryKey ?? 0,
            pageCount: Int(values.value(forKey: "pageCount").integerValue ?? 0),
            value: values.value(forKey:)
        )
    }

    init(_ object: ManagedObject, pageCount: Int) {
        self.init(id: object.objectID.primaryKey ?? 0, pageCount: pageCount, value: object.value(forKey:))
    }

    private init(id: Int64, pageCount: Int, value: (String) -> AttributeValue) {
        self.id = id
        title = value("title").stringValue ?? ""
        price = Self.floatPrecision(value("price").doubleValue ?? 0)
        firstName = value("firstName").stringValue
        lastName = value("lastName").stringValue
        synopsis = value("synopsis").stringValue
        self.pageCount = pageCount
    }

    /// `price` is a Float attribute: PostgreSQL keeps it as `real`, SQLite as a double.
    /// Showing the shortest decimal of its Float value gives `10.99`, not
    /// `10.989999771118164`, on both.
    static func floatPrecision(_ value: Double) -> Double {
        Double(Float(value).description) ?? value
    }

    /// Written by hand too, in ``writeJSON(into:)``: a field changes in both.
    enum CodingKeys: String, CodingKey {
        case id, title, price, firstName, lastName, synopsis, pageCount
    }

    // Written out so that empty optional fields appear as `null` rather than not at all.
    /// Writes the fields as the JSON above, every field present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(price, forKey: .price)
        try container.encode(firstName, forKey: .firstName)
        try container.encode(lastName, forKey: .lastName)
        try container.encode(synopsis, forKey: .synopsis)
        try container.encode(pageCount, forKey: .pageCount)
    }

    /// As ``encode(to:)`` with sorted keys (`JSONWritableTests` holds the two together).
    public func writeJSON(into buffer: inout ByteBuffer) throws {
        buffer.writeStaticString("{\"firstName\":")
        JSONText.write(firstName, into: &buffer)
        buffer.writeStaticString(",\"id\":")
        JSONText.write(id, into: &buffer)
        buffer.writeStaticString(",\"lastName\":")
        JSONText.write(lastName, into: &buffer)
        buffer.writeStaticString(",\"pageCount\":")
        JSONText.write(Int64(pageCount), into: &buffer)
        buffer.writeStaticString(",\"price\":")
        try JSONText.write(price, into: &buffer)
        buffer.writeStaticString(",\"synopsis\":")
        JSONText.write(synopsis, into: &buffer)
        buffer.writeStaticString(",\"title\":")
        JSONText.write(title, into: &buffer)
        buffer.writeStaticString("}")
    }
}

/// A page as the API shows it.
///
/// ```json
/// {"id": 7, "number": 1, "text": "It was a dark and stormy night.", "publicationId": 3}
/// ```
public struct PageResource: Sendable, Hashable, ResponseEncodable, JSONWritable {
    /// The page's primary key (`Z_PK`): its id in the API's paths.
    public var id: Int64
    /// The page's number in its publication.
    public var number: Int64
    /// The page's text; `null` when it has none.
    public var text: String?
    /// The publication the page belongs to; `null` for a page of none.
    public var publicationId: Int64?

    /// What ``init(_:)-(FetchedValues)`` reads.
    static let properties: [FetchRequest.Property] = ["number", "text", "publication"]

    /// A page read without making its object (``properties``).
    init(_ values: FetchedValues) {
        id = values.objectID.primaryKey ?? 0
        number = values.value(forKey: "number").integerValue ?? 0
        text = values.value(forKey: "text").stringValue
        publicationId = values.destinationID(forKey: "publication")?.primaryKey
    }

    init(_ object: ManagedObject) {
        id = object.objectID.primaryKey ?? 0
        number = object.value(forKey: "number").integerValue ?? 0
        text = object.value(forKey: "text").stringValue
        publicationId = object.destinationID(forKey: "publication")?.primaryKey
    }

    /// Written by hand too, in ``writeJSON(into:)``: a field changes in both.
    enum CodingKeys: String, CodingKey {
        case id, number, text, publicationId
    }

    /// Writes the fields as the JSON above, every field present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(number, forKey: .number)
        try container.encode(text, forKey: .text)
        try container.encode(publicationId, forKey: .publicationId)
    }

    /// As ``encode(to:)`` with sorted keys (`JSONWritableTests` holds the two together).
    public func writeJSON(into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"id\":")
        JSONText.write(id, into: &buffer)
        buffer.writeStaticString(",\"number\":")
        JSONText.write(number, into: &buffer)
        buffer.writeStaticString(",\"publicationId\":")
        JSONText.write(publicationId, into: &buffer)
        buffer.writeStaticString(",\"text\":")
        JSONText.write(text, into: &buffer)
        buffer.writeStaticString("}")
    }
}

extension PublicationResource {
    /// A publication of these values.
    ///
    /// ```swift
    /// let publication = PublicationResource(id: 1, title: "Dune", price: 9.99, firstName: "Frank", lastName: "Herbert", synopsis: nil, pageCount: 412)
    /// ```
    public init(id: Int64, title: String, price: Double, firstName: String?, lastName: String?, synopsis: String?, pageCount: Int) {
        (self.id, self.title, self.price, self.firstName, self.lastName, self.synopsis, self.pageCount) = (
            id, title, price, firstName, lastName, synopsis, pageCount
        )
    }
}

extension PageResource {
    /// A page of these values.
    init(id: Int64, number: Int64, text: String?, publicationId: Int64?) {
        (self.id, self.number, self.text, self.publicationId) = (id, number, text, publicationId)
    }
}
