import Foundation
import Hummingbird

/// A JSON value as it was sent, before it is checked against a resource's fields.
///
/// Request bodies are read into this (by `JSONParser`) rather than straight into
/// `Decodable` types so that
/// every problem — an unknown field, a string where a number belongs, a fraction where an
/// integer belongs — is reported by field name, all at once, instead of the first
/// `DecodingError`. It also builds the OpenAPI document from literals:
///
/// ```swift
/// let value = try JSONValue(parsing: Data(#"{"title": "Dune", "price": 9.5}"#.utf8))
/// value.objectValue?["price"]   // .number(9.5)
/// let schema: JSONValue = ["type": "string", "maxLength": 10]
/// ```
public enum JSONValue: Sendable, Hashable {
    /// JSON's `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; JSON does not tell integers from fractions, so every number is a `Double`.
    case number(Double)
    /// A string.
    case string(String)
    /// An array, in its order.
    case array([JSONValue])
    /// An object; duplicate member names are refused when parsing.
    case object([String: JSONValue])

    /// Parses a JSON text strictly (RFC 8259, no duplicate member names).
    ///
    /// - Throws: an error saying what is wrong and at which byte when the text is not JSON.
    public init(parsing data: Data) throws {
        self = try JSONParser.parse(Array(data))
    }

    /// The JSON `value` encodes to, as the service writes bodies (``Response/jsonEncoder()``);
    /// `null` for a value that cannot be encoded (none of the service's own can fail).
    init(encoding value: some Encodable) {
        self = (try? Response.jsonEncoder().encode(value)).flatMap { try? JSONValue(parsing: $0) } ?? .null
    }

    /// The members when the value is an object; `nil` otherwise.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The JSON type's name, for error messages: "a string", "an object".
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The text of this value as JSON.
    public func serialized(sortedKeys: Bool = false) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = sortedKeys ? [.sortedKeys, .withoutEscapingSlashes] : [.withoutEscapingSlashes]
        // Encoding a JSONValue cannot fail: every case is plain JSON.
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }
}

/// Encodable, so a route returns it as it is (the OpenAPI document): ``JSONResponseEncoder``
/// writes it with sorted keys, as ``serialized(sortedKeys:)`` does.
extension JSONValue: ResponseEncodable {
    /// Writes the value as plain JSON; whole numbers without `.0`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            // Whole numbers print without ".0", as people write them.
            if value.rounded() == value, abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A string literal as ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal as ``number(_:)``.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A float literal as ``number(_:)``.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// `true` or `false` as ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array literal as ``array(_:)``.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal as ``object(_:)``; of a repeated key, the last value wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `nil` as ``null``.
    public init(nilLiteral: ()) { self = .null }
}
