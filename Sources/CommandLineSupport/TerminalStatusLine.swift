import Foundation
import Synchronization

/// Standard error on a terminal, shared by log lines and a status line (the migration's
/// progress bar) kept beneath them: a log line clears the status line, is written on its
/// own line, and the status line is drawn again after it. Without this a log line would
/// start where the bar's text ends.
///
/// ```swift
/// let terminal = TerminalStatusLine.standardError
/// terminal.show("█████░░░░░ 50%  step 3/4 …")   // drawn in place
/// terminal.write("2026-11-25T10:00:00 info bookstore: migration stage …\n")   // above it
/// terminal.finish()                               // the status line stays, the cursor moves on
/// ```
public final class TerminalStatusLine: Sendable {
    /// The process's standard error.
    public static let standardError = TerminalStatusLine { FileHandle.standardError.write(Data($0.utf8)) }

    private let output: @Sendable (String) -> Void
    /// The status line drawn now, `nil` when none is.
    private let status = Mutex<String?>(nil)

    /// `output` receives everything written, in order.
    public init(output: @escaping @Sendable (String) -> Void) {
        self.output = output
    }

    /// Writes `text` (whole lines) above the status line, if one is drawn.
    public func write(_ text: String) {
        status.withLock { status in
            guard let line = status else { return output(text) }
            output(Self.clear + text + (text.hasSuffix("\n") ? "" : "\n") + line)
        }
    }

    /// Draws `line` as the status line, in place of the one drawn; nothing is written when
    /// it is the same.
    public func show(_ line: String) {
        status.withLock { status in
            guard status != line else { return }
            status = line
            output(Self.clear + line)
        }
    }

    /// Leaves the status line as it is drawn and moves on: what follows starts on a new line.
    public func finish() {
        status.withLock { status in
            guard status != nil else { return }
            status = nil
            output("\n")
        }
    }

    /// Back to the line's start, and the line erased (ANSI EL).
    static let clear = "\r\u{1B}[K"
}

/// A text stream into ``TerminalStatusLine``: where a log handler writes on a terminal.
struct TerminalStatusLineStream: TextOutputStream, Sendable {
    let terminal: TerminalStatusLine

    func write(_ string: String) {
        terminal.write(string)
    }
}
