import Foundation

/// A small file system of a test's own — a `tmpfs` mounted on a new temporary folder — to
/// make a disk fill up or turn read-only under a store for real, with the engine's own
/// errors.
///
/// As root it is mounted where everyone sees it (the throwaway PostgreSQL server, which then
/// runs as the `postgres` user, writes tablespaces on it). Without root it is mounted in a
/// user and mount namespace of a helper process (``NamespacedMount``) and reached through
/// that process's root; the server then runs as the same user and writes there too. Where
/// neither is possible, making one throws, saying why.
///
/// ```swift
/// let small = try SmallFileSystem(bytes: 4 << 20)
/// defer { small.unmount() }
/// try small.fill(leaving: 64 << 10)
/// ```
public final class SmallFileSystem: Sendable {
    /// Where this process (and its children) reach it.
    public let folder: URL
    /// The folder it is mounted on, in this process's file system.
    private let mountPoint: URL
    private let mounting: Mounting

    /// How it was mounted.
    private enum Mounting: Sendable {
        /// By this process, as root: visible to every process.
        case here
        /// By a helper in a namespace of its own, reached through the helper's root.
        case namespaced(NamespacedMount)
    }

    /// Mounts a `tmpfs` of `bytes` on a new temporary folder.
    ///
    /// - Throws: ``SmallFileSystemError`` saying why, when this process can neither mount
    ///   (root) nor make a user namespace to mount in.
    public init(bytes: Int) throws {
        mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("small-fs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        do {
            if getuid() == 0 {
                try Self.mount(["-t", "tmpfs", "-o", "size=\(bytes),mode=0777", "tmpfs", mountPoint.path])
                mounting = .here
                folder = mountPoint
            } else {
                let namespaced = try NamespacedMount(bytes: bytes, mountPoint: mountPoint.path)
                mounting = .namespaced(namespaced)
                folder = URL(fileURLWithPath: namespaced.path)
                // Here the mount point stays an empty folder: a SQLite store opened by this
                // process at `folder` would land in it; read-only, that fails loudly instead.
                _ = chmod(mountPoint.path, 0o500)
            }
        } catch {
            try? FileManager.default.removeItem(at: mountPoint)
            throw error
        }
    }

    /// Changes its size, keeping what it holds (`bytes` must hold that).
    public func resize(to bytes: Int) throws {
        try remount("size=\(bytes)")
    }

    /// Makes it read-only (`ro`), or writable again.
    public func setReadOnly(_ readOnly: Bool) throws {
        try remount(readOnly ? "ro" : "rw")
    }

    /// The program and arguments that run `executable` with `arguments` where this file
    /// system is mounted: unchanged as root; otherwise entering the helper's namespaces,
    /// for any program that opens a SQLite store at ``folder`` (SQLite resolves the helper's
    /// root, `/proc/<pid>/root`, to `/`, and so would look in this process's namespace,
    /// where the mount point is an empty folder it may not write). This process reads and
    /// writes files at ``folder`` itself, and a PostgreSQL server puts tablespaces there.
    ///
    /// ```swift
    /// let seed = try await BuiltCommand("bookstore").runningOn(small).run(["seed", "--store", url.description])
    /// ```
    public func launching(_ executable: URL, _ arguments: [String], in workingDirectory: URL) throws -> (executable: URL, arguments: [String]) {
        switch mounting {
        case .here: (executable, arguments)
        case .namespaced(let namespaced): try namespaced.launching(executable, arguments, in: workingDirectory)
        }
    }

    private func remount(_ options: String) throws {
        switch mounting {
        case .here: try Self.mount(["-o", "remount,\(options)", mountPoint.path])
        case .namespaced(let namespaced): try namespaced.remount(options)
        }
    }

    /// The bytes in use.
    public func usedBytes() throws -> Int {
        let info = try statistics()
        return Int(info.f_blocks - info.f_bfree) * Int(info.f_frsize)
    }

    private func statistics() throws -> statvfs {
        var info = statvfs()
        guard statvfs(folder.path, &info) == 0 else { throw SmallFileSystemError("statvfs failed: \(String(cString: strerror(errno)))") }
        return info
    }

    /// Writes a filler file so that at most `free` bytes are left.
    public func fill(leaving free: Int) throws {
        let info = try statistics()
        let available = Int(info.f_bavail) * Int(info.f_frsize)
        let filler = folder.appendingPathComponent("filler")
        _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let chunk = Data(count: 64 << 10)
        var written = 0
        let target = max(0, available - free)
        while written + chunk.count <= target {
            try handle.write(contentsOf: chunk)
            written += chunk.count
        }
        if target > written { try handle.write(contentsOf: chunk.prefix(target - written)) }
    }

    /// Gives `bytes` of the filler file back, so that much is free again (about).
    public func release(_ bytes: Int) throws {
        let filler = folder.appendingPathComponent("filler")
        let size = (try FileManager.default.attributesOfItem(atPath: filler.path)[.size] as? Int) ?? 0
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(max(0, size - bytes)))
    }

    /// Removes the filler file.
    public func empty() {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("filler"))
    }

    /// Unmounts it and removes the folder.
    public func unmount() {
        switch mounting {
        case .here: _ = try? Self.run("umount", ["-l", mountPoint.path])
        case .namespaced(let namespaced): namespaced.stop()
        }
        try? FileManager.default.removeItem(at: mountPoint)
    }

    private static func mount(_ arguments: [String]) throws {
        try run("mount", arguments)
    }

    /// Runs a system tool to its end. Through ``BuiltCommand``, so its output pipes are
    /// never inherited by another child started meanwhile (a throwaway PostgreSQL server),
    /// which would keep them open and the read of the output from ever ending.
    @discardableResult
    private static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let result = try BuiltCommand(systemTool: tool).runBlocking(arguments)
        guard result.status == 0 else {
            throw SmallFileSystemError("\(tool) \(arguments.joined(separator: " ")) failed: \(result.stdout)\(result.stderr)")
        }
        return result.stdout
    }
}

/// A small file system that could not be set up.
public struct SmallFileSystemError: Error, CustomStringConvertible {
    /// What failed: the tool, its arguments and its output.
    public let description: String
    init(_ description: String) { self.description = description }
}
