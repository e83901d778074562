import Foundation

/// The process's resident memory, from `/proc/self/status` (Linux).
enum PeakMemory {
    /// Starts a new peak: the kernel resets `VmHWM` to the current resident size when "5"
    /// is written to `clear_refs`.
    static func reset() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The peak resident size since the last ``reset()`` (or the process start), in bytes.
    static var peak: Int { field("VmHWM") }

    /// The resident size now, in bytes.
    static var current: Int { field("VmRSS") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return kilobytes * 1024
    }
}
