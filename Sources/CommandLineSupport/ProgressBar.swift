import Foundation
import Persistence
import Synchronization

/// A one-line progress bar on a terminal's standard error, beneath the log lines
/// (``TerminalStatusLine``); `nil` when standard error is not a terminal, where log lines
/// report progress instead.
public final class ProgressBar: Sendable {
    private let terminal: TerminalStatusLine

    /// A bar drawn as `terminal`'s status line.
    public init(terminal: TerminalStatusLine) {
        self.terminal = terminal
    }

    /// A bar on standard error, or `nil` when standard error is not a terminal.
    public static func forStandardError() -> ProgressBar? {
        isatty(STDERR_FILENO) == 1 ? ProgressBar(terminal: .standardError) : nil
    }

    /// Redraws the bar for `progress`: the whole migration's percentage, the step and stage, time spent and left.
    public func show(_ progress: MigrationProgress) {
        let width = 30
        let filled = Int((progress.fractionCompleted * Double(width)).rounded(.down))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let percent = Int((progress.fractionCompleted * 100).rounded(.down))
        let left = progress.estimatedTimeRemaining.map { ", ~\(Self.text($0)) left" } ?? ""
        let line =
            "\(bar) \(percent)%  step \(progress.step)/\(progress.stepCount) \(progress.destinationVersion): \(progress.stage.rawValue)"
            + "  (\(Self.text(progress.elapsed))\(left))"
        terminal.show(line)
    }

    /// `42 s`, `3 min 5 s`, `1 h 2 min`: whole seconds, the largest units first.
    static func text(_ duration: Duration) -> String {
        let seconds = max(0, duration.components.seconds)
        let (hours, minutes) = (seconds / 3600, seconds / 60 % 60)
        if hours > 0 { return "\(hours) h \(minutes) min" }
        return minutes > 0 ? "\(minutes) min \(seconds % 60) s" : "\(seconds) s"
    }

    /// Leaves the bar as last drawn and moves on: what follows starts on a new line.
    public func finish() {
        terminal.finish()
    }
}
