import Persistence

/// The fields a client may write of a publication, read from a request body.
///
/// The model's rules (title required, price 0…1000) are the save's to check, so that
/// the API refuses exactly what the model refuses (422); this only refuses what is not a
/// publication at all (400): unknown or read-only fields, values of the wrong JSON type.
struct PublicationInput: Sendable {
    static let writable = ["title", "price", "firstName", "lastName", "synopsis"]
    static let readOnly = ["id", "pageCount"]

    var title: FieldValue<String>
    var price: FieldValue<Double>
    var firstName: FieldValue<String>
    var lastName: FieldValue<String>
    var synopsis: FieldValue<String>

    init(_ fields: [String: JSONValue]) throws(Problem) {
        var reader = FieldReader(fields, writable: Self.writable, readOnly: Self.readOnly, resource: "publication")
        title = reader.string("title", maxLength: TextLimit.title)
        price = reader.number("price")
        firstName = reader.string("firstName", maxLength: TextLimit.name)
        lastName = reader.string("lastName", maxLength: TextLimit.name)
        synopsis = reader.string("synopsis", maxLength: TextLimit.synopsis)
        try reader.finish()
    }

    /// Writes the fields into `object`. `replacing` (POST, PUT) gives fields left out the
    /// model's default; otherwise (PATCH) they keep their values.
    func apply(to object: ManagedObject, replacing: Bool) {
        object.write(title, forKey: "title", replacing: replacing, AttributeValue.string)
        object.write(price, forKey: "price", replacing: replacing, AttributeValue.double)
        object.write(firstName, forKey: "firstName", replacing: replacing, AttributeValue.string)
        object.write(lastName, forKey: "lastName", replacing: replacing, AttributeValue.string)
        object.write(synopsis, forKey: "synopsis", replacing: replacing, AttributeValue.string)
    }
}

/// The fields a client may write of a page.
struct PageInput: Sendable {
    static let writable = ["number", "text"]
    static let readOnly = ["id", "publicationId"]

    var number: FieldValue<Int64>
    var text: FieldValue<String>

    init(_ fields: [String: JSONValue]) throws(Problem) {
        var reader = FieldReader(fields, writable: Self.writable, readOnly: Self.readOnly, resource: "page")
        // Integer 16 in the model: a number outside it is not a page number at all.
        number = reader.integer("number", in: Int64(Int16.min)...Int64(Int16.max))
        text = reader.string("text", maxLength: TextLimit.pageText)
        try reader.finish()
    }

    func apply(to object: ManagedObject, replacing: Bool) {
        object.write(number, forKey: "number", replacing: replacing, AttributeValue.integer)
        object.write(text, forKey: "text", replacing: replacing, AttributeValue.string)
    }
}
