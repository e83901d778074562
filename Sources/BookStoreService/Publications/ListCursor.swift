import Foundation
import Persistence

/// Where a keyset page begins (`after`): the previous page's last row, as its values of the
/// list's sort fields and its id. A list gives it as `next`; a client hands it back as it is.
///
/// In id order (no `sort`, or `sort=id`) it is the id itself, `after=42`; in any other
/// order it also carries the sort values and the order it was made for, as URL-safe base64
/// of JSON, so that a row deleted since still marks the place:
///
/// ```swift
/// ListCursor(sort: "", values: [], id: 42).text                       // "42"
/// ListCursor(sort: "-price", values: [.double(9.5)], id: 7).text      // "eyJpZCI6Ny…"
/// ```
struct ListCursor: Sendable, Hashable {
    /// The `sort` the cursor was made for, as the request wrote it ("" for none).
    let sort: String
    /// The row's value of each sort field that is not the id, in the sort's order.
    let values: [AttributeValue]
    let id: Int64

    /// Whether the list is in plain id order, where the id alone is the cursor.
    static func isIDOrder(_ sort: String) -> Bool { sort.isEmpty || sort == "id" }

    /// What `after` takes, as the OpenAPI document says it: an id (digits, no leading
    /// zero), or a cursor (base64url of JSON, which begins `{"`, so `eyJ`).
    static let pattern = "^(0|[1-9][0-9]{0,18}|eyJ[A-Za-z0-9_-]+)$"

    /// Whether `text` has the shape of ``pattern``; whether it names a place is another matter.
    static func isWellFormed(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        if text == "0" { return true }
        if let first = bytes.first, first != UInt8(ascii: "0"), bytes.count <= 19, bytes.allSatisfy(isDigit) { return true }
        return text.hasPrefix("eyJ") && bytes.count > 3 && bytes.allSatisfy(base64URLBytes.contains)
    }

    private static let base64URLBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// What `next` and `after` carry.
    var text: String {
        guard !Self.isIDOrder(sort) else { return String(id) }
        // Numbers as their shortest exact text, so that a double comes back bit for bit.
        let encoded: [JSONValue] = values.map { value in
            switch value {
            case .null: .null
            case .string(let text): .string(text)
            case .integer(let number): .string(String(number))
            default: value.doubleValue.map { .string(String($0)) } ?? .null
            }
        }
        let json: JSONValue = ["sort": .string(sort), "values": .array(encoded), "id": .string(String(id))]
        return json.serialized(sortedKeys: true).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads `text` as a cursor of a list sorted by `sort` over `fields` (the non-id ones);
    /// `nil` when it is not one such a list gave.
    init?(text: String, sort: String, fields: [ListQuery.SortField]) {
        if Self.isIDOrder(sort) {
            guard let id = Int64(text), id >= 0, String(id) == text else { return nil }
            self.init(sort: sort, values: [], id: id)
            return
        }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let json = try? JSONValue(parsing: data),
            case .object(let members) = json, members.count == 3,
            case .string(sort)? = members["sort"], case .string(let idText)? = members["id"], let id = Int64(idText),
            case .array(let encoded)? = members["values"], encoded.count == fields.count
        else { return nil }
        var values: [AttributeValue] = []
        for (field, value) in zip(fields, encoded) {
            switch (field.kind, value) {
            case (_, .null): values.append(.null)
            // NUL is in no stored text (``TextLimit``), and PostgreSQL takes none in an argument.
            case (.text, .string(let text)) where !text.utf8.contains(0): values.append(.string(text))
            case (.integer, .string(let text)):
                guard let number = Int64(text) else { return nil }
                values.append(.integer(number))
            case (.number, .string(let text)):
                guard let number = Double(text), number.isFinite else { return nil }
                values.append(.double(number))
            default: return nil
            }
        }
        self.init(sort: sort, values: values, id: id)
    }

    init(sort: String, values: [AttributeValue], id: Int64) {
        self.sort = sort
        self.values = values
        self.id = id
    }
}
