import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The README's tour of the `bookstore` command, run as written, in order, in a folder of
/// its own after `scripts/run.sh` would have made `./bookstore.sqlite`: every command
/// succeeds, and the stores end where the tour says.
@Suite("README tour")
struct ReadmeTourTests {
    @Test func theBookstoreCommandTourRunsInOrderAsWritten() async throws {
        let commands = try Self.block(containing: "swift run bookstore seed --model-version 1")
        #expect(commands.count >= 8)
        let (directory, cleanUp) = temporaryDirectory()
        defer { cleanUp() }
        // What scripts/run.sh leaves: the service's store, at the current version.
        let served = try await BookStoreProcess.running(["seed", "--store", "sqlite://\(directory.path)/bookstore.sqlite"])
        #expect(served.status == 0, "\(served.stderr)")
        var environment: [String: String] = [:]
        for line in commands {
            let words = try Self.words(line)
            switch words.first {
            case "export":
                let assignment = words[1].split(separator: "=", maxSplits: 1).map(String.init)
                environment[assignment[0]] = assignment[1]
            case "unset":
                environment[words[1]] = nil
            case "swift":
                #expect(Array(words.prefix(3)) == ["swift", "run", "bookstore"], "\(line)")
                let run = try await Self.bookstore(Array(words.dropFirst(3)), in: directory, environment: environment)
                #expect(run.status == 0, "\(line)\n\(run.stdout)\(run.stderr)")
            default:
                Issue.record("the tour has a line the test does not know: \(line)")
            }
        }
        // The tour's store went 1 → 3 → 5 → 4 → 5, then was replaced at version 2; the service's was not touched.
        func version(_ name: String) async throws -> String {
            let status = try await Self.bookstore(["status", "--store", "sqlite://./\(name)"], in: directory, environment: [:])
            return status.stdout.split(separator: "\n").first { $0.hasPrefix("Store model version:") }.map(String.init) ?? status.stderr
        }
        #expect(try await version("tour.sqlite") == "Store model version:   BookStore 2")
        #expect(try await version("bookstore.sqlite") == "Store model version:   BookStore 5")
        #expect(try await version("big-copy.sqlite") == "Store model version:   BookStore 4")
    }

    /// The command lines of the README's `sh` block that holds `line`, comments dropped.
    static func block(containing line: String) throws -> [String] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let block = try #require(blocks.first { $0.contains(line) }, "the README has no sh block with \(line)")
        return block.split(separator: "\n").map { text in
            // A comment starts at " # " outside quotes; the tour quotes none.
            String(text.components(separatedBy: " #")[0]).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    /// A line's words as the shell splits them: the tour uses no quotes or expansions.
    static func words(_ line: String) throws -> [String] {
        #expect(!line.contains("\"") && !line.contains("'") && !line.contains("$"), "the tour's lines are plain: \(line)")
        return line.split(separator: " ").map(String.init)
    }

    /// The built `bookstore`, run in `directory` with `environment` over the test's own
    /// (without its BOOKSTORE_STORE).
    static func bookstore(_ arguments: [String], in directory: URL, environment: [String: String]) async throws -> BuiltCommand.Output {
        var command = BookStoreProcess.command
        command.workingDirectory = directory
        command.environment = environment
        return try await command.run(arguments)
    }
}
