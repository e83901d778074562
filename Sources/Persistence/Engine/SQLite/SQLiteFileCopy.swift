import CSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A byte-for-byte copy of the database file a SQLite connection has open, read through
/// that connection's own file handle.
///
/// Only for a file that holds every commit and that nobody can commit to meanwhile: its
/// WAL written back (or a store in rollback-journal mode), its write lock held. Then the
/// file alone is the database, and its bytes are what SQLite's backup API would write page
/// by page, at a fraction of the cost (at 1 M books, about a third of the backup's time).
///
/// Never through a descriptor of its own: closing any descriptor of a file drops every
/// POSIX lock the process holds on it, the write lock that holds other writers off among
/// them. SQLite's handle reads without opening or closing anything.
///
/// ```swift
/// let copied = try SQLiteFileCopy.copy(databaseOf: reader, to: workFile)  // writers held off, WAL written back
/// ```
enum SQLiteFileCopy {
    /// Copies the main database file of `connection` to a new file at `destination`.
    ///
    /// - Returns: `false`, leaving nothing at `destination`, when the file could not be read
    ///   this way (its handle out of reach, a failed or short read): the caller copies it
    ///   otherwise.
    /// - Throws: ``MigrationError`` over the ``SystemCallError`` when the copy could not be
    ///   written (the fault, a full disk among them, read from its errno); what was written
    ///   is removed.
    static func copy(databaseOf connection: SQLiteConnection, to destination: String) throws(MigrationError) -> Bool {
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        var size: sqlite3_int64 = 0
        guard sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK,
            let file = pointer, let methods = file.pointee.pMethods?.pointee, let read = methods.xRead, let sizeOf = methods.xFileSize,
            sizeOf(file, &size) == SQLITE_OK
        else { return false }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure(SystemCallError("open")) }
        do throws(MigrationError) {
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var offset: sqlite3_int64 = 0
            while offset < size {
                let count = Int(min(sqlite3_int64(buffer.count), size - offset))
                guard buffer.withUnsafeMutableBytes({ read(file, $0.baseAddress, Int32(count), offset) }) == SQLITE_OK else {
                    close(output)
                    unlink(destination)
                    return false
                }
                try writeAll(buffer, count: count, to: output)
                offset += sqlite3_int64(count)
            }
            // A file system that reports a failed write late does so here.
            guard close(output) == 0 else {
                unlink(destination)
                throw failure(SystemCallError("close"))
            }
            return true
        } catch {
            close(output)
            unlink(destination)
            throw error
        }
    }

    private static func writeAll(_ buffer: [UInt8], count: Int, to output: Int32) throws(MigrationError) {
        var written = 0
        while written < count {
            let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
            if step < 0, errno == EINTR { continue }
            guard step > 0 else { throw failure(SystemCallError("write", code: step < 0 ? errno : EIO)) }
            written += step
        }
    }

    private static func failure(_ error: SystemCallError) -> MigrationError {
        MigrationError(
            .store,
            "could not copy the store into the migration's work folder (\(error.call)): \(error.reason)",
            hint: "check the folder's permissions and free space; the store was not changed",
            underlying: error
        )
    }
}
