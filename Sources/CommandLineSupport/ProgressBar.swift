import Foundation
import Persistence
import Synchronization

/// A one-line progress bar on a terminal's standard error; `nil` when standard error is
/// not a terminal, where log lines report progress instead.
public final class ProgressBar: Sendable {
    private let lastLine = Mutex("")

    public static func forStandardError() -> ProgressBar? {
        isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil
    }

    public func show(_ progress: MigrationProgress) {
        let width = 30
        let filled = Int((progress.fractionCompleted * Double(width)).rounded(.down))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let percent = Int((progress.fractionCompleted * 100).rounded(.down))
        let line = "\r\(bar) \(percent)%  step \(progress.step)/\(progress.stepCount) \(progress.destinationVersion): \(progress.stage.rawValue)"
        let changed = lastLine.withLock { last in
            defer { last = line }
            return last != line
        }
        if changed { FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8)) }
    }

    public func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
