import BookStoreTesting
import CommandLineSupport
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// On a terminal the migration's progress bar stays on a line of its own, beneath the log
/// lines, which never start where the bar's text ends.
@Suite("progress bar")
struct ProgressBarTests {
    @Test func logLinesGoAboveTheStatusLine() {
        let written = Mutex("")
        let terminal = TerminalStatusLine { text in written.withLock { $0 += text } }
        terminal.write("before\n")
        terminal.show("bar 10%")
        terminal.show("bar 10%")
        terminal.write("log A\n")
        terminal.show("bar 50%")
        terminal.write("log B\n")
        terminal.show("bar 100%")
        terminal.finish()
        terminal.write("after\n")
        #expect(Self.screen(written.withLock { $0 }) == ["before", "log A", "log B", "bar 100%", "after"])
    }

    /// `bookstore migrate` on a pseudo-terminal (`script`), with info logs: every line of the
    /// screen is a log line or the bar, none both, and the bar ends at 100 % on the last line.
    @Test(arguments: TestEngine.allCases)
    func theBarOfARealMigrationIsNeverInterleavedWithLogLines(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seed = try await BookStoreProcess.running(["seed", "--model-version", "3", "--count", "3000", "--store", url.description])
            #expect(seed.status == 0, "\(seed.stderr)")
            let command = [try BookStoreProcess.executable.path, "migrate", "--store", url.description, "--log-level", "info"]
                .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            let run = try await BuiltCommand(systemTool: "script").run(["--quiet", "--return", "--flush", "--command", command, "/dev/null"])
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            let lines = Self.screen(run.stdout).filter { !$0.isEmpty }
            let bars = lines.filter { $0.contains("░") || $0.contains("█") }
            let logs = lines.filter { $0.contains(" info bookstore: ") || $0.contains(" notice bookstore: ") }
            #expect(bars.count == 1 && bars.first?.hasPrefix("██████████████████████████████ 100%") == true, "\(lines)")
            #expect(logs.count > 5 && logs.allSatisfy { $0.hasPrefix("20") && !$0.contains("░") && !$0.contains("█") }, "\(lines)")
            #expect(logs.contains { $0.contains("Migration progress of BookStore 4 → BookStore 5: ") })
            // The bar is beneath every log line; only the summary printed on standard output follows.
            let barLine = try #require(lines.firstIndex { $0.contains("█") })
            #expect(lines[(barLine + 1)...].allSatisfy { !$0.contains(" info ") }, "\(lines)")
        }
    }

    /// What a terminal shows for `output`: `\r` returns to the line's start, `ESC[K` erases
    /// from there, `\n` begins a new line (a pseudo-terminal writes `\r\n`).
    static func screen(_ output: String) -> [String] {
        var lines: [String] = []
        var line: [Character] = []
        var column = 0
        var rest = Substring(output)
        while let character = rest.first {
            if rest.hasPrefix("\u{1B}[K") {
                line.removeSubrange(min(column, line.count)...)
                rest = rest.dropFirst(3)
                continue
            }
            rest = rest.dropFirst()
            switch character {
            case "\r": column = 0
            case "\n", "\r\n":
                lines.append(String(line))
                line = []
                column = 0
            default:
                if column < line.count { line[column] = character } else { line.append(character) }
                column += 1
            }
        }
        if !line.isEmpty { lines.append(String(line)) }
        return lines
    }
}
