import CSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A byte-for-byte copy of a SQLite database file, made by the kernel.
///
/// Only for a file that holds every commit and that nobody can commit to meanwhile: its
/// WAL written back (or a rollback journal), its write lock held. Then the file alone is
/// the database, and copying its bytes is what SQLite's backup API would write page by
/// page, at a fraction of the cost (at 1 M books, 0.05 s against 0.3 s).
///
/// ```swift
/// try SQLiteFileCopy.copy(storePath, to: workFile)  // writers held off, WAL written back
/// ```
enum SQLiteFileCopy {
    /// Copies the file at `source` to a new file at `destination`; on failure removes
    /// what was written and throws the system's error (`ENOSPC`: the disk is full).
    static func copy(_ source: String, to destination: String) throws(DatabaseError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure("opening \(source) to copy it", errno: errno) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure("creating \(destination)", errno: errno) }
        do throws(DatabaseError) {
            try transfer(from: input, to: output, describing: destination)
            close(output)
        } catch {
            close(output)
            unlink(destination)
            throw error
        }
    }

    private static func transfer(from input: Int32, to output: Int32, describing destination: String) throws(DatabaseError) {
        #if canImport(Glibc)
        while true {
            let sent = sendfile(output, input, nil, 1 << 30)
            if sent == 0 { return }
            if sent < 0 {
                if errno == EINTR { continue }
                throw failure("copying the store to \(destination)", errno: errno)
            }
        }
        #else
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("reading the store to copy it to \(destination)", errno: errno)
            }
            var written = 0
            while written < count {
                let n = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw failure("copying the store to \(destination)", errno: errno)
                }
                written += n
            }
        }
        #endif
    }

    private static func failure(_ doing: String, errno code: Int32) -> DatabaseError {
        let full = code == ENOSPC || code == EDQUOT
        return DatabaseError(resultCode: full ? SQLITE_FULL : SQLITE_IOERR, message: "\(doing) failed: \(String(cString: strerror(code)))",
                             systemErrorCode: code)
    }
}
