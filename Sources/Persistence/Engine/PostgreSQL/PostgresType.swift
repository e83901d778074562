import Foundation

/// The PostgreSQL types a ``PostgresConnection`` reads and writes, by type OID, and how a
/// value of each becomes a ``DatabaseValue``.
///
/// Results come in binary when every column's type is one of ``binaryReadable``: exact
/// and cheap (no hex for `bytea`, no decimal text for floats). Other statements come in
/// text, which every type has.
///
/// | type | DatabaseValue |
/// | --- | --- |
/// | `smallint`, `integer`, `bigint`, `oid` | `.integer` |
/// | `real`, `double precision` | `.double` |
/// | `numeric` | `.text`, every digit kept (for `Decimal`) |
/// | `text`, `varchar`, `char(n)`, `name` | `.text` |
/// | `bytea` | `.blob` |
/// | `boolean` | `.integer(1)` or `.integer(0)`, as SQLite stores it |
/// | `uuid` | `.text`, lower case |
/// | `timestamp with time zone` | `.double`: seconds since 2001-01-01, Core Data's dates |
/// | anything else | `.text`, the server's text form |
enum PostgresType {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let char: UInt32 = 18
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let unknown: UInt32 = 705
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043
    static let timestamp: UInt32 = 1114
    static let timestamptz: UInt32 = 1184
    static let numeric: UInt32 = 1700
    static let uuid: UInt32 = 2950

    /// The types whose binary form ``decode(binary:type:)`` reads.
    static let binaryReadable: Set<UInt32> = [
        bool, bytea, char, name, int8, int2, int4, text, oid, float4, float8, unknown,
        bpchar, varchar, timestamp, timestamptz, numeric, uuid,
    ]

    // MARK: Binary results

    static func decode(binary bytes: UnsafeRawBufferPointer, type: UInt32) -> DatabaseValue {
        switch type {
        case bool: return .integer(bytes.first == 0 ? 0 : 1)
        case int2 where bytes.count == 2: return .integer(Int64(Int16(bigEndian: bytes.loadUnaligned(as: Int16.self))))
        case int4 where bytes.count == 4: return .integer(Int64(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self))))
        case oid where bytes.count == 4: return .integer(Int64(UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))))
        case int8 where bytes.count == 8: return .integer(Int64(bigEndian: bytes.loadUnaligned(as: Int64.self)))
        case float4 where bytes.count == 4:
            return .double(Double(Float(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)))))
        case float8 where bytes.count == 8:
            return .double(Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))))
        case bytea: return .blob(Data(bytes))
        case timestamp where bytes.count == 8, timestamptz where bytes.count == 8:
            return .double(PostgresTimestamp.secondsSinceReferenceDate(microsecondsSince2000: Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))))
        case uuid where bytes.count == 16:
            let value = bytes.loadUnaligned(as: uuid_t.self)
            return .text(UUID(uuid: value).uuidString.lowercased())
        case numeric: return numericText(bytes).map(DatabaseValue.text) ?? .null
        default: return .text(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// `numeric`'s binary form: digit count, weight, sign, display scale, then base-10000
    /// digits, the first of them worth 10000^weight. Written out as exact decimal text.
    static func numericText(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 8 else { return nil }
        func int16(_ offset: Int) -> Int { Int(Int16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))) }
        let count = int16(0)
        let weight = int16(2)
        let sign = UInt16(truncatingIfNeeded: int16(4))
        let scale = int16(6)
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        default: break
        }
        guard count >= 0, bytes.count >= 8 + 2 * count else { return nil }
        let digits = (0..<count).map { int16(8 + 2 * $0) }
        func group(_ index: Int) -> Int { index >= 0 && index < digits.count ? digits[index] : 0 }
        var text = sign == 0x4000 ? "-" : ""
        if weight < 0 {
            text += "0"
        } else {
            text += String(group(0))
            for index in stride(from: 1, through: weight, by: 1) {
                let part = String(group(index))
                text += String(repeating: "0", count: 4 - part.count) + part
            }
        }
        if scale > 0 {
            var fraction = ""
            var index = weight + 1
            while fraction.count < scale {
                let part = String(group(index))
                fraction += String(repeating: "0", count: 4 - part.count) + part
                index += 1
            }
            text += "." + fraction.prefix(scale)
        }
        return text
    }

    // MARK: Text results

    static func decode(text value: String, type: UInt32) -> DatabaseValue {
        switch type {
        case bool: return .integer(value == "t" ? 1 : 0)
        case int2, int4, int8, oid: return Int64(value).map(DatabaseValue.integer) ?? .text(value)
        // A `real`'s text is the shortest that reads back as that float: read as a float,
        // it is the double its binary form gives.
        case float4: return Float(value).map { DatabaseValue.double(Double($0)) } ?? .text(value)
        case float8: return Double(value).map(DatabaseValue.double) ?? .text(value)
        case bytea: return hexBytes(value).map(DatabaseValue.blob) ?? .text(value)
        case timestamp, timestamptz: return PostgresTimestamp.secondsSinceReferenceDate(text: value).map(DatabaseValue.double) ?? .text(value)
        default: return .text(value)
        }
    }

    /// `bytea`'s text form, `\x0a1b…`.
    static func hexBytes(_ text: String) -> Data? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: nil
            }
        }
        var data = Data(capacity: (utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        return data
    }
}
