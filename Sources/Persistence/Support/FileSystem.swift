import Dispatch

#if canImport(Glibc)
import Glibc
private let systemRename = Glibc.rename
#elseif canImport(Darwin)
import Darwin
private let systemRename = Darwin.rename
#endif

/// A system call that failed, with its `errno`: what a file error is underneath, said in
/// words (`description` is the call and `strerror`).
struct SystemCallError: Error, Sendable, CustomStringConvertible {
    let call: String
    let code: Int32

    /// The failure of `call` just now, from `errno`.
    init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    var reason: String { String(cString: strerror(code)) }
    var description: String { "\(call): \(reason)" }
}

/// The few file-system calls whose guarantees Foundation does not spell out, and a way to
/// run blocking file work off the cooperative thread pool.
enum FileSystem {
    private static let queue = DispatchQueue(label: "persistence.files", attributes: .concurrent)

    /// Runs blocking file work (copying a store, syncing, renaming) on a queue of its own.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Gives `destination` the permissions and, where allowed, the owner of `source`, so a
    /// file that replaces another is used as it was.
    static func copyOwnership(from source: String, to destination: String) {
        var info = stat()
        guard stat(source, &info) == 0 else { return }
        _ = chmod(destination, info.st_mode & 0o7777)
        _ = chown(destination, info.st_uid, info.st_gid)
    }

    /// `rename(2)`: atomically replaces `destination` on the same file system.
    static func rename(_ source: String, to destination: String) throws(MigrationError) {
        guard systemRename(source, destination) == 0 else {
            let error = SystemCallError("rename")
            throw MigrationError(
                .store,
                "could not move the migrated store into place: \(error.reason)",
                hint: "check that the folder is writable; the store was not changed",
                underlying: error
            )
        }
    }

    /// `fsync(2)` of a file or folder, so a rename survives a power cut.
    static func sync(_ path: String) throws(MigrationError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            let error = SystemCallError("open")
            throw MigrationError(
                .store,
                "could not open \(path) to write it to disk: \(error.reason)",
                hint: "check the folder's permissions and free space",
                underlying: error
            )
        }
        defer { close(fd) }
        guard fsync(fd) == 0 else {
            let error = SystemCallError("fsync")
            throw MigrationError(
                .store,
                "could not write \(path) to disk: \(error.reason)",
                hint: "check the disk and its free space",
                underlying: error
            )
        }
    }
}
