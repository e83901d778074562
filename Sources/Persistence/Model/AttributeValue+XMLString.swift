import Foundation

/// Converts attribute values to and from the strings Xcode writes in `contents` files
/// (`defaultValueString`, `minValueString`, `defaultDateTimeInterval`, …).
///
/// Kept in one place so that the parser and the writer cannot drift apart: whatever
/// ``xmlString(_:)`` writes, ``parse(_:as:)`` reads back to an equal value.
enum XMLValueCoding {
    /// The value of a `defaultValueString` for an attribute of `type`, or `nil` if the text
    /// is not a valid value of that type. Dates are not written this way (see ``parseDate(_:)``).
    static func parseDefault(_ text: String, as type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            guard let value = Int64(text), type.integerRange?.contains(value) ?? true else { return nil }
            return .integer(value)
        case .double, .float:
            return parseDouble(text).map(AttributeValue.double)
        case .decimal:
            return parseDecimal(text).map(AttributeValue.decimal)
        case .string:
            return .string(text)
        case .boolean:
            switch text {
            case "YES", "yes", "true", "TRUE", "1": return .bool(true)
            case "NO", "no", "false", "FALSE", "0": return .bool(false)
            default: return nil
            }
        case .date:
            return parseDate(text)
        case .uuid:
            return UUID(uuidString: text).map(AttributeValue.uuid)
        case .uri:
            return URL(string: text).map(AttributeValue.uri)
        case .binary, .transformable, .undefined:
            // Xcode's editor offers no default for binary data, transformed values or an
            // Undefined transient.
            return nil
        }
    }

    /// The value of a `minValueString`/`maxValueString`: a number for numeric types, a
    /// length for strings and binary data. `nil` if the text is invalid or the type has no bounds.
    static func parseBound(_ text: String, as type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            return Int64(text).map(AttributeValue.integer)
        case .double, .float:
            return parseDouble(text).map(AttributeValue.double)
        case .decimal:
            return parseDecimal(text).map(AttributeValue.decimal)
        case .string, .binary:
            guard let length = Int64(text), length >= 0 else { return nil }
            return .integer(length)
        case .date:
            return parseDate(text)
        case .boolean, .uuid, .uri, .transformable, .undefined:
            return nil
        }
    }

    /// A `…DateTimeInterval` value: seconds since 2001-01-01 00:00:00 UTC, Core Data's reference date.
    static func parseDate(_ text: String) -> AttributeValue? {
        parseDouble(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
    }

    /// The text Xcode would write for a value.
    static func xmlString(_ value: AttributeValue) -> String {
        switch value {
        case .null: ""
        case .integer(let v): String(v)
        case .double(let v): format(v)
        case .decimal(let v): v.description
        case .string(let v): v
        case .bool(let v): v ? "YES" : "NO"
        case .date(let v): format(v.timeIntervalSinceReferenceDate)
        case .binary(let v): v.base64EncodedString()
        case .uuid(let v): v.uuidString
        case .uri(let v): v.absoluteString
        }
    }

    /// Whole numbers without a trailing `.0`, as Xcode writes them (`maxValueString="1000"`).
    static func format(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 {
            return String(Int64(value))
        }
        return String(value)
    }

    static func parseDouble(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `Decimal(string:)` accepts a valid prefix ("1.5abc" is 1.5), so check the whole text first.
    static func parseDecimal(_ text: String) -> Decimal? {
        var rest = Substring(text)
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        let mantissa = rest.prefix { $0 != "e" && $0 != "E" }
        let exponent = rest.dropFirst(mantissa.count)
        let digitsOnly = mantissa.filter { $0 != "." }
        guard !digitsOnly.isEmpty, digitsOnly.allSatisfy(\.isASCIIDigit),
            mantissa.filter({ $0 == "." }).count <= 1
        else { return nil }
        if !exponent.isEmpty {
            var e = exponent.dropFirst()
            if e.first == "-" || e.first == "+" { e = e.dropFirst() }
            guard !e.isEmpty, e.allSatisfy(\.isASCIIDigit) else { return nil }
        }
        return Decimal(string: text)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
