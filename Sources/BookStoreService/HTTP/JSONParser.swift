/// A strict JSON (RFC 8259) parser for request bodies.
///
/// Foundation's decoders take some text that is not JSON — `{"title": "x",}` — so a
/// client's mistake could pass for a valid body. This one takes exactly RFC 8259's grammar,
/// refuses duplicate member names (which one would win is anyone's guess) and nesting
/// deeper than 64 levels, and says where it stopped:
///
/// ```swift
/// try JSONParser.parse(Array(#"{"title": "x",}"#.utf8))
/// // JSONParser.Failure: expected a member name in quotes at byte 15
/// ```
///
/// Hummingbird decodes a body with the context's `requestDecoder`, a `JSONDecoder`
/// (`request.decode(as:context:)`): it takes such text too, and stops at the first
/// `DecodingError`. Bodies are parsed with this instead, and their fields read with
/// ``FieldReader``, which names every bad field at once.
struct JSONParser {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ message: String) -> Failure {
        Failure(description: "\(message) at byte \(index + 1)")
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        guard current == byte else { throw failure(current == nil ? "unexpected end of the body, expected \(what)" : "expected \(what)") }
        index += 1
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        guard let byte = current else { throw failure("unexpected end of the body, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("expected a value")
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for byte in word.utf8 { try expect(byte, "'\(word)'") }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let name = try string()
            guard members[name] == nil else { throw failure("the member '\(name)' appears twice") }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a member name")
            skipWhitespace()
            members[name] = try value(depth: depth + 1)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return .array(elements)
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var start = index
        while true {
            guard let byte = current else { throw failure("unexpected end of the body inside a string") }
            switch byte {
            case UInt8(ascii: "\""):
                try appendUTF8(bytes[start..<index], to: &scalars)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try appendUTF8(bytes[start..<index], to: &scalars)
                index += 1
                scalars.append(try escape())
                start = index
            case 0x00..<0x20:
                throw failure("a control character in a string must be escaped")
            default:
                index += 1
            }
        }
    }

    private func appendUTF8(_ run: ArraySlice<UInt8>, to scalars: inout String.UnicodeScalarView) throws(Failure) {
        guard !run.isEmpty else { return }
        guard let text = String(validating: run, as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
        scalars.append(contentsOf: text.unicodeScalars)
    }

    private mutating func escape() throws(Failure) -> Unicode.Scalar {
        guard let byte = current else { throw failure("unexpected end of the body inside a string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate must be followed by an escaped low one.
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure("a \\u escape of a high surrogate lacks its low surrogate")
                }
                index += 2
                let low = try hexUnit()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a \\u escape of a high surrogate lacks its low surrogate") }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("a \\u escape names a lone low surrogate") }
            return scalar
        default:
            throw failure("an unknown escape in a string")
        }
    }

    private mutating func hexUnit() throws(Failure) -> UInt32 {
        var unit: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexValue(byte) else { throw failure("a \\u escape needs four hexadecimal digits") }
            unit = unit << 4 | digit
            index += 1
        }
        return unit
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(Failure) -> Double {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while let byte = parser.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { parser.index += 1 }
            return parser.index - from
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw failure("expected a digit")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("expected a digit in the exponent") }
        }
        // The grammar is checked; Double reads it (an out-of-range one becomes infinite,
        // which the field checks refuse).
        return Double(String(decoding: bytes[start..<index], as: UTF8.self)) ?? .nan
    }
}
