import Foundation
import Synchronization

/// A `tmpfs` that an unprivileged process mounts: a helper shell, started by `unshare` in a
/// user and mount namespace of its own (where it may mount), mounts it and then waits for
/// remount requests on its standard input. The mount exists only in the helper's
/// namespace; this process and its children reach it through the helper's root,
/// `/proc/<pid>/root/<mount point>`, which resolves paths in the helper's mount table.
///
/// When the helper's input closes (``stop()``, or this process ending however it ends), the
/// helper exits, its namespace goes, and the file system with it: nothing is left mounted.
///
/// ```swift
/// let mount = try NamespacedMount(bytes: 4 << 20, mountPoint: "/tmp/small-fs-…")
/// try mount.remount("size=\(8 << 20)")
/// // files at mount.path
/// mount.stop()
/// ```
///
/// Unchecked `Sendable`: the helper's handles are used only under `exchange`, one request
/// and its answer at a time.
final class NamespacedMount: @unchecked Sendable {
    /// Where this process reaches the file system.
    let path: String
    private let helper: ChildProcess
    private let input: FileHandle
    private let output: FileHandle
    private let exchange = Mutex(())

    /// The helper: mounts, says `ready <pid>`, then for each line of options remounts with
    /// them and answers `ok` or `failed: <why>` on one line. (`mount` is given the source,
    /// `tmpfs`, as well: in a user namespace it otherwise looks the mount point up in
    /// fstab and refuses.)
    private static let script = """
        mount -t tmpfs -o "size=$1,mode=0777" tmpfs "$2" || exit 1
        echo "ready $$"
        while read -r options; do
            if message=$(mount -o "remount,$options" tmpfs "$2" 2>&1); then echo ok; else echo "failed: $message" | tr '\\n' ' '; echo; fi
        done
        """

    init(bytes: Int, mountPoint: String) throws {
        let (toHelper, fromHelper, errors) = (ChildProcess.Pipe(), ChildProcess.Pipe(), ChildProcess.Pipe())
        helper = try ChildProcess(
            executable: try BuiltCommand(systemTool: "unshare").executable(),
            arguments: ["--user", "--map-root-user", "--mount", "sh", "-c", Self.script, "sh", "\(bytes)", mountPoint],
            input: toHelper.reading,
            output: fromHelper.writing,
            error: errors.writing
        )
        try? toHelper.reading.close()
        try? fromHelper.writing.close()
        try? errors.writing.close()
        input = toHelper.writing
        output = fromHelper.reading
        let ready = Self.readLine(output)
        guard let ready, ready.hasPrefix("ready "), let pid = Int32(ready.dropFirst(6)) else {
            let ended = helper.waitUntilExit()
            let why = String(decoding: errors.reading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw SmallFileSystemError(
                """
                mounting a small file system without root failed: `unshare --user --map-root-user --mount` then \
                `mount -t tmpfs` said \(why.isEmpty ? "nothing (exit status \(ended.shellStatus))" : "'\(why)'"). \
                Run the tests as root, or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, \
                user.max_user_namespaces > 0)
                """
            )
        }
        path = "/proc/\(pid)/root" + mountPoint
    }

    /// Remounts with `options` (`size=…`, `ro`, `rw`), keeping what the file system holds.
    func remount(_ options: String) throws {
        let answer = try exchange.withLock { _ in
            try input.write(contentsOf: Data((options + "\n").utf8))
            return Self.readLine(output) ?? "failed: the helper ended"
        }
        guard answer == "ok" else { throw SmallFileSystemError("remounting the small file system with \(options) \(answer)") }
    }

    /// The program and arguments that run `executable` in the helper's namespaces, as this
    /// user, in `workingDirectory`: there SQLite finds a store at ``path`` (it resolves the
    /// magic link `/proc/<pid>/root` to `/`, which in this process's namespace is a folder
    /// without the mount).
    func launching(_ executable: URL, _ arguments: [String], in workingDirectory: URL) throws -> (executable: URL, arguments: [String]) {
        let enter = try BuiltCommand(systemTool: "nsenter").executable()
        return (
            enter,
            [
                "--target", "\(helper.identifier)", "--user", "--mount", "--preserve-credentials",
                "--wd=\(workingDirectory.path)", "--", executable.path,
            ] + arguments
        )
    }

    /// Ends the helper, and with it the file system.
    func stop() {
        try? input.close()
        helper.waitUntilExit()
    }

    /// One line from the helper, without its newline; `nil` at the end of its output.
    private static func readLine(_ handle: FileHandle) -> String? {
        var line = Data()
        while let byte = try? handle.read(upToCount: 1), let first = byte.first {
            if first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(first)
        }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}
