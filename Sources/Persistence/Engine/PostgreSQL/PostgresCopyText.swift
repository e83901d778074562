/// Rows in the text format of PostgreSQL's `COPY … FROM STDIN`: columns split by tabs,
/// rows ended by newlines, `\N` for NULL, and backslash escapes for the characters the
/// format gives a meaning to. The server reads each field as its column's type, as it
/// reads a text parameter.
///
/// Only values whose text the server reads back as exactly the value are encoded (see
/// ``canEncode(_:into:)``); ``PostgresConnection/insertRows(into:columns:rows:)`` sends other
/// rows as bound parameters.
///
/// ```swift
/// var text = PostgresCopyText()
/// text.append(row: [.integer(1), .text("a\tb"), .null])   // "1\ta\\tb\t\\N\n"
/// ```
struct PostgresCopyText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Whether the server reads this value's text, in a column of type `column` (an OID, 0
    /// when unknown), as exactly what the same value bound as an argument would store.
    ///
    /// A double's shortest text reads back as the same double in a `double precision`
    /// column, and as the same float in a `real` one when the double is a float (every
    /// value of a Float attribute is). A double between two floats could round differently
    /// from text than from binary in a `real` column, and other types read a double's text
    /// their own way (`numeric` keeps digits the binary argument's cast drops), so those
    /// take the argument path. A text holding NUL is left to the argument path too, which
    /// reports it as it does for any statement.
    static func canEncode(_ value: DatabaseValue, into column: UInt32) -> Bool {
        switch value {
        case .double(let v):
            switch column {
            case PostgresType.float8: true
            case PostgresType.float4: !v.isFinite || Double(Float(v)) == v
            default: false
            }
        case .text(let v): !v.utf8.contains(0)
        case .null, .integer, .blob: true
        }
    }

    /// Whether every value of `row` can go by `COPY` (``canEncode(_:into:)``), its columns'
    /// types in `columnTypes`.
    static func canEncode(row: [DatabaseValue], columnTypes: [UInt32]) -> Bool {
        for (index, value) in row.enumerated() where !canEncode(value, into: index < columnTypes.count ? columnTypes[index] : 0) {
            return false
        }
        return true
    }

    mutating func append(row: [DatabaseValue]) {
        for (index, value) in row.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "\t")) }
            append(value)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    private mutating func append(_ value: DatabaseValue) {
        switch value {
        case .null:
            bytes.append(contentsOf: #"\N"#.utf8)
        case .integer(let v):
            bytes.append(contentsOf: String(v).utf8)
        case .double(let v):
            // The server's spellings; Swift's description is the shortest text that reads back as `v`.
            let text = v.isNaN ? "NaN" : v == .infinity ? "Infinity" : v == -.infinity ? "-Infinity" : "\(v)"
            bytes.append(contentsOf: text.utf8)
        case .text(let v):
            for byte in v.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
                default: bytes.append(byte)
                }
            }
        case .blob(let data):
            // bytea's hex input, `\x…`, its backslash escaped for the COPY format.
            bytes.append(contentsOf: #"\\x"#.utf8)
            for byte in data {
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
