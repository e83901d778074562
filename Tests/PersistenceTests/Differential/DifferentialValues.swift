import Foundation

@testable import Persistence

/// Values shaped like users' data, and the edges a store must keep: prices with cents and
/// doubles of every precision, non-ASCII and 4-byte text, empty strings and very long ones,
/// integer extremes, dates with sub-second precision, blobs, and NULL in any attribute.
enum DifferentialValues {
    /// One value of an attribute of `type`, NULL once in eight.
    static func value(of type: AttributeType, using rng: inout SeededGenerator) -> AttributeValue {
        if rng.oneIn(8) { return .null }
        switch type {
        case .string: return .string(text(using: &rng))
        case .double: return .double(double(using: &rng))
        case .float: return .double(Double(float(using: &rng)))
        case .integer16: return .integer(integer(in: Int64(Int16.min)...Int64(Int16.max), using: &rng))
        case .integer32: return .integer(integer(in: Int64(Int32.min)...Int64(Int32.max), using: &rng))
        case .integer64: return .integer(integer(in: Int64.min...Int64.max, using: &rng))
        case .decimal: return .decimal(decimal(using: &rng))
        case .boolean: return .bool(rng.oneIn(2))
        case .date: return .date(date(using: &rng))
        case .binary, .transformable: return .binary(blob(using: &rng))
        case .uuid: return .uuid(uuid(using: &rng))
        case .uri: return .uri(URL(string: "https://example.com/books/\(rng.next() % 100_000)?q=caf%C3%A9")!)
        default: return .null
        }
    }

    static let words = [
        "Jane Austen", "Fëdor Dostoevskij", "José Saramago", "Nguyễn Du", "李白", "Маргарита",
        "Ørjan Ærø", "Chinua Achebe", "O'Brien", "\"quoted\"", "back\\slash", "tab\there", "line\nbreak",
        "e\u{301}", "Müller", "Zoë", "📚", "𝄞 music", "🦀🦀", "👩🏽‍💻 dev", "Σωκράτης", "עִבְרִית", "العربية",
    ]

    /// Text of every kind: empty, a word or name in any script, 4-byte characters, random
    /// Unicode scalars, and now and then a text of tens of thousands of characters.
    static func text(using rng: inout SeededGenerator) -> String {
        switch rng.next() % 20 {
        case 0: return ""
        case 1: return " "
        case 2:
            return String(String.UnicodeScalarView((0..<Int(rng.next() % 40 + 1)).map { _ in scalar(using: &rng) }))
        case 3 where rng.oneIn(25):
            return String(repeating: "Ünïcödé 📚 text, ", count: 2_000 + Int(rng.next() % 1_000))
        case 4: return String(repeating: "x", count: Int(rng.next() % 300))
        default:
            return (0..<Int(rng.next() % 4 + 1)).map { _ in rng.pick(words) }.joined(separator: " ")
        }
    }

    /// Any scalar but NUL (a text of NUL is its own suite's) and the surrogates (not scalars).
    static func scalar(using rng: inout SeededGenerator) -> Unicode.Scalar {
        while true {
            let candidate = rng.oneIn(3) ? UInt32(rng.next() % 0x80) : UInt32(rng.next() % 0x11_0000)
            if candidate != 0, let scalar = Unicode.Scalar(candidate) { return scalar }
        }
    }

    /// Prices with cents, shortest texts of 1 to 17 digits, the extremes, −0, infinities,
    /// subnormals and random bits: never NaN, which no store keeps as a number.
    static func double(using rng: inout SeededGenerator) -> Double {
        switch rng.next() % 10 {
        case 0, 1, 2: return Double(Int(rng.next() % 1_000_000)) / 100
        case 3: return rng.pick([0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1e-7, 123_456_789.012_345_67, 9_007_199_254_740_993])
        case 4: return rng.pick([-0.0, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude])
        case 5: return Double.leastNonzeroMagnitude * Double(rng.next() % 1_000 + 1)
        default:
            var value = Double.nan
            while !value.isFinite { value = Double(bitPattern: rng.next()) }
            return value
        }
    }

    static func float(using rng: inout SeededGenerator) -> Float {
        switch rng.next() % 6 {
        case 0: return Float(Int(rng.next() % 100_000)) / 100
        case 1: return rng.pick([Float.greatestFiniteMagnitude, -.leastNonzeroMagnitude, .infinity, -0.0, 0.1])
        default:
            var value = Float.nan
            while !value.isFinite { value = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())) }
            return value
        }
    }

    /// The extremes of the range, 0 and ±1 half the time; any value of it otherwise.
    static func integer(in range: ClosedRange<Int64>, using rng: inout SeededGenerator) -> Int64 {
        if rng.oneIn(2) { return rng.pick([range.lowerBound, range.upperBound, 0, 1, -1]) }
        return Int64.random(in: range, using: &rng)
    }

    /// Amounts with cents, of up to 15 digits.
    static func decimal(using rng: inout SeededGenerator) -> Decimal {
        let cents = Int64(rng.next() % 100_000_000_000_000) * (rng.oneIn(4) ? -1 : 1)
        return Decimal(cents) / 100
    }

    /// Instants from 1901 to 2100 with sub-second parts down to the microsecond and below.
    static func date(using rng: inout SeededGenerator) -> Date {
        switch rng.next() % 4 {
        case 0: return Date(timeIntervalSinceReferenceDate: Double(Int64.random(in: -3_155_760_000...3_155_760_000, using: &rng)))
        case 1: return Date(timeIntervalSinceReferenceDate: Double(Int64.random(in: 0...3_000_000_000, using: &rng)) + 0.25)
        default: return Date(timeIntervalSinceReferenceDate: Double.random(in: -3_155_760_000...3_155_760_000, using: &rng))
        }
    }

    /// Empty, a few bytes, or (rarely) 100 KB of random bytes.
    static func blob(using rng: inout SeededGenerator) -> Data {
        let count = rng.oneIn(10) ? 0 : (rng.oneIn(200) ? 100_000 : Int(rng.next() % 64 + 1))
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        for _ in 0..<count { bytes.append(UInt8(truncatingIfNeeded: rng.next())) }
        return Data(bytes)
    }

    static func uuid(using rng: inout SeededGenerator) -> UUID {
        let (a, b) = (rng.next(), rng.next())
        return UUID(
            uuid: withUnsafeBytes(of: (a, b)) { bytes in
                (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                )
            }
        )
    }
}
