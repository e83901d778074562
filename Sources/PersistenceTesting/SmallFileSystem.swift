import Foundation

/// A small file system of a test's own — a `tmpfs` mounted on a new temporary folder — to
/// make a disk fill up or turn read-only under a store for real, with the engine's own
/// errors. Mounting needs root (the test machines run as root); ``isAvailable`` says.
///
/// ```swift
/// let small = try SmallFileSystem(bytes: 4 << 20)
/// defer { small.unmount() }
/// try small.fill(leaving: 64 << 10)
/// ```
public final class SmallFileSystem: Sendable {
    /// Where it is mounted.
    public let folder: URL

    /// Whether this process may mount one.
    public static var isAvailable: Bool { getuid() == 0 }

    /// Mounts a `tmpfs` of `bytes` on a new temporary folder.
    public init(bytes: Int) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("small-fs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            try Self.mount(["-t", "tmpfs", "-o", "size=\(bytes),mode=0777", "tmpfs", folder.path])
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// Changes its size, keeping what it holds (`bytes` must hold that).
    public func resize(to bytes: Int) throws {
        try Self.mount(["-o", "remount,size=\(bytes)", folder.path])
    }

    /// Makes it read-only (`ro`), or writable again.
    public func setReadOnly(_ readOnly: Bool) throws {
        try Self.mount(["-o", "remount,\(readOnly ? "ro" : "rw")", folder.path])
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
        _ = try? Self.run("umount", ["-l", folder.path])
        try? FileManager.default.removeItem(at: folder)
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
    public let description: String
    init(_ description: String) { self.description = description }
}
