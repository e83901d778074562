import Foundation
import NIOCore

/// A resource that writes its own JSON, byte for byte what `Response.jsonEncoder()` makes
/// of it (keys sorted, slashes as they are), without `JSONEncoder`'s per-value boxing: a
/// list page of twenty publications took 71 µs to encode that way, longer than reading it.
/// `JSONWritableTests` holds the two to the same bytes.
///
/// Hummingbird encodes a `ResponseEncodable` result with the context's encoder, which is
/// `JSONEncoder` unless a context names another; the service's (``JSONResponseEncoder``)
/// writes a `JSONWritable` value with this instead: kept for speed, the one thing
/// Hummingbird's encoding lacks here.
///
/// ```swift
/// var buffer = ByteBuffer()
/// try publication.writeJSON(into: &buffer)   // {"firstName":"Bill","id":1,…}
/// ```
public protocol JSONWritable: Encodable {
    /// Appends the value's JSON, keys sorted; throws where `JSONEncoder` would (a number
    /// that is not finite).
    func writeJSON(into buffer: inout ByteBuffer) throws
}

/// JSON's scalars, written as `JSONEncoder` writes them.
///
/// ```swift
/// JSONText.write("Zoë \"quoted\"", into: &buffer)   // "Zoë \"quoted\""
/// try JSONText.write(22.0, into: &buffer)            // 22
/// ```
public enum JSONText {
    /// A string, quoted, with `"`, `\` and control characters escaped (`/` and non-ASCII
    /// as they are).
    public static func write(_ string: String, into buffer: inout ByteBuffer) {
        var string = string
        // One pass over the UTF-8 (contiguous for every native string): the runs between
        // characters to escape are copied whole.
        string.withUTF8 { bytes in
            buffer.reserveCapacity(minimumWritableBytes: bytes.count + 2)
            buffer.writeInteger(UInt8(ascii: "\""))
            var start = 0
            for index in bytes.indices where needsEscape(bytes[index]) {
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                writeEscaping(bytes[index], into: &buffer)
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...])))
            buffer.writeInteger(UInt8(ascii: "\""))
        }
    }

    /// A string, or `null`.
    public static func write(_ string: String?, into buffer: inout ByteBuffer) {
        if let string { write(string, into: &buffer) } else { buffer.writeStaticString("null") }
    }

    /// An integer.
    public static func write(_ value: Int64, into buffer: inout ByteBuffer) {
        // The digits from the last, without making a String: at most 19 and a sign.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: digits[start...])))
        }
    }

    /// An integer, or `null`.
    public static func write(_ value: Int64?, into buffer: inout ByteBuffer) {
        if let value { write(value, into: &buffer) } else { buffer.writeStaticString("null") }
    }

    /// The shortest decimal that reads back as `value`, without a trailing `.0`.
    ///
    /// - Throws: `EncodingError.invalidValue` for NaN and infinities, as the encoder does.
    public static func write(_ value: Double, into buffer: inout ByteBuffer) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not a JSON number"))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        buffer.writeString(text)
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func writeEscaping(_ byte: UInt8, into buffer: inout ByteBuffer) {
        switch byte {
        case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
        case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
        case 0x08: buffer.writeStaticString("\\b")
        case 0x0C: buffer.writeStaticString("\\f")
        case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
        case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
        case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
        case ..<0x20:
            buffer.writeStaticString("\\u00")
            buffer.writeInteger(hex[Int(byte >> 4)])
            buffer.writeInteger(hex[Int(byte & 0x0F)])
        default: buffer.writeInteger(byte)
        }
    }
}
