import Foundation

/// Statement arguments laid out the way `PQexecPrepared` takes them: one buffer holding
/// every value, with a type, length and format for each.
///
/// Integers, doubles and blobs go in binary (`int8`, `float8`, `bytea`): exact, and no
/// escaping. Text goes as text with no declared type, so the server reads it as whatever
/// the statement needs there (`numeric`, `uuid`, `boolean`, `timestamptz`, `text`).
struct PostgresArguments {
    private(set) var types: [UInt32] = []
    private(set) var lengths: [Int32] = []
    private(set) var formats: [Int32] = []
    /// Where each value starts in `buffer`; `nil` for SQL NULL.
    private var offsets: [Int?] = []
    /// Never empty, so a zero-length value still gets a non-nil pointer (libpq reads a nil
    /// pointer as NULL).
    private var buffer: [UInt8] = [0]

    /// `nullTypes`, when given, is the type each NULL is declared with, by position: rows of
    /// a multi-row statement then declare the same types whatever is NULL, and the
    /// statement prepared for the first chunk serves every other.
    ///
    /// - Throws: ``DatabaseError`` (SQLSTATE 22021) for a text holding NUL (U+0000), which
    ///   PostgreSQL's `text` cannot hold and libpq would cut at: refused, never cut.
    ///   `argumentName` says which value it is (a column, for a row of an insert).
    init(
        _ values: [DatabaseValue],
        nullTypes: [UInt32]? = nil,
        sql: String,
        argumentName: (Int) -> String = { "argument \($0 + 1)" }
    ) throws(DatabaseError) {
        for (index, value) in values.enumerated() {
            if case .text(let v) = value, v.utf8.contains(0) {
                throw DatabaseError(
                    resultCode: 0,
                    message: "the text of \(argumentName(index)) holds a NUL character (U+0000), which PostgreSQL text cannot store",
                    sql: sql,
                    sqlState: "22021"
                )
            }
            switch value {
            case .null:
                append(type: nullTypes?[index] ?? 0, bytes: nil, format: 0)
            case .integer(let v):
                append(type: PostgresType.int8, bytes: withUnsafeBytes(of: v.bigEndian, Array.init), format: 1)
            case .double(let v):
                append(type: PostgresType.float8, bytes: withUnsafeBytes(of: v.bitPattern.bigEndian, Array.init), format: 1)
            case .text(let v):
                // Text values are read up to their terminating NUL.
                append(type: 0, bytes: Array(v.utf8) + [0], format: 0)
            case .blob(let v):
                append(type: PostgresType.bytea, bytes: Array(v), format: 1)
            }
        }
    }

    private mutating func append(type: UInt32, bytes: [UInt8]?, format: Int32) {
        types.append(type)
        formats.append(format)
        guard let bytes else {
            offsets.append(nil)
            lengths.append(0)
            return
        }
        offsets.append(buffer.count)
        lengths.append(Int32(format == 0 ? bytes.count - 1 : bytes.count))
        buffer.append(contentsOf: bytes)
    }

    var count: Int { types.count }

    /// The type a value is declared with (0: untyped text, or NULL).
    static func type(of value: DatabaseValue) -> UInt32 {
        switch value {
        case .null, .text: 0
        case .integer: PostgresType.int8
        case .double: PostgresType.float8
        case .blob: PostgresType.bytea
        }
    }

    /// Calls `body` with the value pointers, valid only during the call.
    func withValuePointers<T>(_ body: ([UnsafePointer<CChar>?]) throws -> T) rethrows -> T {
        try buffer.withUnsafeBufferPointer { storage in
            let base = UnsafeRawPointer(storage.baseAddress!)
            let pointers = offsets.map { offset in
                offset.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return try body(pointers)
        }
    }
}
