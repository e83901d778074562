import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder beside a SQLite store where a migration builds its new files, owned by the
/// running migration through an exclusive `flock` on a file inside it.
///
/// A migration killed halfway leaves its folder behind but not its lock (the kernel drops
/// it with the process), so the next migration of the store can tell such a folder from a
/// running migration's and remove it.
final class WorkFolder {
    let url: URL
    private let lockDescriptor: Int32

    private static let lockName = "owner.lock"

    /// Creates and locks a new work folder for the store at `storePath`.
    init(besideStoreAt storePath: String) throws {
        let store = URL(fileURLWithPath: storePath)
        url = store.deletingLastPathComponent().appendingPathComponent(".\(store.lastPathComponent).migration-\(UUID().uuidString)")
        guard mkdir(url.path, 0o700) == 0 else {
            let error = SystemCallError("mkdir")
            throw MigrationError(
                .store,
                "could not create the migration's work folder beside the store: \(error.reason)",
                hint: "check that the store's folder is writable and has free space; the store was not changed",
                underlying: error
            )
        }
        let fd = open(url.appendingPathComponent(Self.lockName).path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let error = SystemCallError(fd >= 0 ? "flock" : "open")
            if fd >= 0 { close(fd) }
            try? FileManager.default.removeItem(at: url)
            throw MigrationError(
                .store,
                "could not lock the migration's work folder beside the store: \(error.reason)",
                hint: "check that the store's folder is writable; the store was not changed",
                underlying: error
            )
        }
        lockDescriptor = fd
    }

    /// Removes the folder and gives up the lock.
    func remove() {
        try? FileManager.default.removeItem(at: url)
        close(lockDescriptor)
    }

    /// Gives up the lock and leaves the folder, as a killed process does.
    func abandon() {
        close(lockDescriptor)
    }

    /// The work folders of migrations of this store that were interrupted: those whose
    /// lock nobody holds.
    static func abandoned(besideStoreAt storePath: String) -> [URL] {
        let store = URL(fileURLWithPath: storePath)
        let folder = store.deletingLastPathComponent()
        let prefix = ".\(store.lastPathComponent).migration-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.sorted().compactMap { name -> URL? in
            guard name.hasPrefix(prefix) else { return nil }
            let candidate = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
            let fd = open(candidate.appendingPathComponent(lockName).path, O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                defer { close(fd) }
                // Held: a migration is running there.
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
            }
            return candidate
        }
    }

    /// Removes an interrupted migration's work folder (one of ``abandoned(besideStoreAt:)``).
    static func remove(abandoned folder: URL, storePath: String, logger: Logger) {
        guard (try? FileManager.default.removeItem(at: folder)) != nil else { return }
        logger.notice(
            "removed the work folder of an interrupted migration",
            metadata: [
                LoggingKeys.store: "\(storePath)", "persistence.migration.folder": "\(folder.lastPathComponent)",
            ]
        )
    }
}
