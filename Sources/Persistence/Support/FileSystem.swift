#if canImport(Glibc)
import Glibc
private let systemRename = Glibc.rename
#elseif canImport(Darwin)
import Darwin
private let systemRename = Darwin.rename
#endif

/// The few file-system calls whose guarantees Foundation does not spell out.
enum FileSystem {
    /// `rename(2)`: atomically replaces `destination` on the same file system.
    static func rename(_ source: String, to destination: String) throws(MigrationError) {
        guard systemRename(source, destination) == 0 else {
            throw MigrationError(.store, "could not move the migrated store into place: \(String(cString: strerror(errno)))",
                                 hint: "check that the folder is writable; the store was not changed")
        }
    }

    /// `fsync(2)` of a file or folder, so a rename survives a power cut.
    static func sync(_ path: String) throws(MigrationError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw MigrationError(.store, "could not open \(path) to sync it: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fsync(fd) == 0 else {
            throw MigrationError(.store, "could not sync \(path): \(String(cString: strerror(errno)))")
        }
    }
}
