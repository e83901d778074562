import CSQLite

/// Text in and out of SQLite by its byte count, never up to a NUL: SQLite keeps every byte
/// of a text value, NUL (U+0000) included, and a string stored is the string read back.
/// Measuring by `strlen` would cut `"a\u{0}b"` to `"a"` without a word.
enum SQLiteText {
    /// Binds `text` to the `index`th parameter of `statement`.
    static func bind(_ text: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            // An empty buffer may have no address; SQLite reads a nil pointer as NULL.
            guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, csqlite_transient()) }
            return sqlite3_bind_text64(
                statement,
                index,
                UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                sqlite3_uint64(bytes.count),
                csqlite_transient(),
                UInt8(SQLITE_UTF8)
            )
        }
    }

    /// Sets `text` as a SQL function's result.
    static func result(_ text: String, in context: OpaquePointer?) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return sqlite3_result_text(context, "", 0, csqlite_transient()) }
            sqlite3_result_text64(
                context,
                UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                sqlite3_uint64(bytes.count),
                csqlite_transient(),
                UInt8(SQLITE_UTF8)
            )
        }
    }

    /// The string of a column or function argument, from the pointer and byte count SQLite
    /// gives (the pointer asked for first: asking for it may convert the value and change
    /// its byte count).
    static func string(_ bytes: UnsafePointer<UInt8>?, byteCount: @autoclosure () -> Int32) -> String {
        guard let bytes else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(byteCount())), as: UTF8.self)
    }
}
