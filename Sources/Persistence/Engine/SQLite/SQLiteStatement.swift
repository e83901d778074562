import CSQLite
import Foundation

/// A prepared SQLite statement.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: SQLiteConnection
    let columnCount: Int32

    init(connection: SQLiteConnection, sql: String) throws(DatabaseError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.error(rc, sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
        self.columnCount = sqlite3_column_count(statement)
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ arguments: [DatabaseValue]) throws(DatabaseError) {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == arguments.count else {
            throw DatabaseError(resultCode: SQLITE_RANGE, message: "statement takes \(expected) arguments, got \(arguments.count)", sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .double(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v): rc = SQLiteText.bind(v, to: handle, at: index)
            case .blob(let v):
                rc = v.withUnsafeBytes { bytes in
                    // A zero-length blob still binds as a blob, not NULL.
                    sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), csqlite_transient())
                }
            }
            guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
        }
    }

    /// Steps once; `true` while there is a row to read.
    func step() throws(DatabaseError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc: throw connection.error(rc, sql: sql)
        }
    }

    func row() -> Row {
        var values: [DatabaseValue] = []
        values.reserveCapacity(Int(columnCount))
        for column in 0..<columnCount {
            values.append(value(at: column))
        }
        return Row(values)
    }

    func value(at column: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(SQLiteText.string(sqlite3_column_text(handle, column), byteCount: sqlite3_column_bytes(handle, column)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }
}
