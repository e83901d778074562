import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One migrator at a time per SQLite store: an exclusive `flock` on a lock file beside the
/// store, naming its holder for the others' log lines.
///
/// The file is removed on release. A waiter that got the lock of a file removed meanwhile
/// notices (the path no longer leads to the file it locked) and tries again, so two
/// processes never both hold the lock.
final class SQLiteMigrationLock: MigrationLock, Sendable {
    private let descriptor: Int32
    private let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    static func lockPath(forStoreAt storePath: String) -> String {
        let store = URL(fileURLWithPath: storePath)
        return store.deletingLastPathComponent().appendingPathComponent(".\(store.lastPathComponent)-migration.lock").path
    }

    /// Whether the store's lock file is there with nobody holding it: a killed run's.
    static func isAbandoned(storeAt storePath: String) -> Bool {
        let fd = open(lockPath(forStoreAt: storePath), O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// Waits up to `timeout` for the lock, logging who holds it.
    ///
    /// - Throws: ``MigrationError/Code/storeBusy`` naming the holder when the time is up.
    static func acquire(storeAt storePath: String, store: StoreURL, timeout: Duration, logger: Logger) async throws -> SQLiteMigrationLock {
        let path = lockPath(forStoreAt: storePath)
        let deadline = ContinuousClock.now + timeout
        var announced = false
        while true {
            let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                let error = SystemCallError("open")
                throw MigrationError(
                    .store,
                    "cannot create the migration lock file beside the store: \(error.reason)",
                    hint: "check that the store's folder is writable",
                    store: store.description,
                    underlying: error
                )
            }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                if isStillLinked(fd, path: path) {
                    let lock = SQLiteMigrationLock(descriptor: fd, path: path)
                    lock.writeHolder()
                    return lock
                }
                close(fd)
                continue
            }
            let holder = readHolder(fd)
            close(fd)
            guard ContinuousClock.now < deadline else {
                throw MigrationError(
                    .storeBusy,
                    "another migration of the store is running (\(holder)) and did not finish in \(timeout)",
                    hint: "wait for it to finish, or stop it; the store was not changed",
                    store: store.description
                )
            }
            if !announced {
                logger.notice(
                    "waiting for another migration of the store to finish",
                    metadata: [
                        LoggingKeys.store: "\(store)", "persistence.migration.holder": "\(holder)",
                    ]
                )
                announced = true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Gives the lock up and removes the file, while still holding it.
    func release() {
        unlink(path)
        close(descriptor)
    }

    /// Closes the file without removing it: the kernel's `flock` goes, the file stays.
    func abandon() {
        close(descriptor)
    }

    private static func isStillLinked(_ fd: Int32, path: String) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(fd, &opened) == 0, stat(path, &named) == 0 else { return false }
        return opened.st_ino == named.st_ino && opened.st_dev == named.st_dev
    }

    private func writeHolder() {
        let text = "pid \(getpid()) on \(ProcessInfo.processInfo.hostName) since \(Date().formatted(.iso8601))\n"
        _ = ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
    }

    private static func readHolder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return "holder unknown" }
        return String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
