import Foundation

/// Loads one server with one kind of request through wrk, bounded in time: an unmeasured
/// warm-up run (statement caches, page cache, connection pools) before the first round's,
/// then the measured run, whose `--latency` output ``WrkReport`` reads.
///
/// The ids and offsets are random per request (a Lua script picks them), so the load is
/// spread over the whole store rather than one hot row.
struct WrkRunner: Sendable {
    let executable: String
    let threads: Int
    let connections: Int
    /// Seconds of a measured run.
    let duration: Int
    /// Seconds of the warm-up before a request's first measured run on a server.
    let warmup: Int
    /// Publications in the store: ids are 1…books.
    let books: Int
    /// Measured runs of each request on each server, taken in turn (see ``HTTPBenchmark``).
    let rounds: Int

    /// The requests the benchmark loads, as the report names them.
    enum Target: String, CaseIterable, Sendable {
        case publication = "GET /publications/{id}"
        /// A keyset page: the 20 publications after a random id (measured next to the
        /// single read it is compared with).
        case keyset = "GET /publications?limit=20&after={id}"
        case list = "GET /publications?limit=20&offset={k}"
    }

    /// One measured run of `target`, after the warm-up when `warmingUp`.
    func run(_ target: Target, host: String, port: Int, warmingUp: Bool = true) async throws -> WrkReport {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("bookstore-benchmark-\(UUID().uuidString.prefix(8)).lua")
        try self.script(for: target).write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let url = "http://\(host):\(port)/publications"
        if warmingUp, warmup > 0 {
            _ = try await wrk(script: script.path, url: url, seconds: warmup)
        }
        return try WrkReport(parsing: try await wrk(script: script.path, url: url, seconds: duration))
    }

    /// A `request` function that formats each request with a new random id or offset;
    /// each wrk thread seeds its own generator, so the threads do not repeat each other.
    private func script(for target: Target) -> String {
        let path =
            switch target {
            case .publication: "\"/publications/\" .. math.random(1, \(books))"
            case .list: "\"/publications?limit=20&offset=\" .. math.random(0, \(max(books - 21, 0)))"
            case .keyset: "\"/publications?limit=20&after=\" .. math.random(0, \(max(books - 21, 0)))"
            }
        return """
            local threads = 0
            function setup(thread)
                threads = threads + 1
                thread:set("number", threads)
            end
            function init(args)
                math.randomseed(os.time() * 100 + number)
            end
            function request()
                return wrk.format("GET", \(path))
            end

            """
    }

    /// Runs wrk to its end and returns what it printed (standard output and error). Its
    /// output is read on a dispatch queue: the cooperative threads are the servers'.
    private func wrk(script: String, url: String, seconds: Int) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", script, url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let (status, text) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Int32, String), any Error>) in
                DispatchQueue.global().async {
                    do {
                        try process.run()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            if process.isRunning { process.terminate() }
        }
        guard status == 0 else {
            throw HTTPBenchmark.Failure("wrk exited with status \(status) on \(url): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return text
    }
}
