import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The status of one `GET` on a loopback server, by hand over a socket (HTTP/1.1,
/// `Connection: close`): enough to wait until a server is ready, without an HTTP client
/// library. The blocking socket calls run on a dispatch queue, never on the cooperative
/// threads the servers answer on.
enum HTTPProbe {
    /// Asks every 100 ms until `path` answers `expected`.
    ///
    /// - Throws: ``HTTPBenchmark/Failure`` when it has not after `timeout`, naming the last answer.
    static func waitForStatus(_ expected: Int, host: String, port: Int, path: String, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        var last: Int?
        while ContinuousClock.now < deadline {
            last = await status(host: host, port: port, path: path)
            if last == expected { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HTTPBenchmark.Failure(
            "GET http://\(host):\(port)\(path) did not answer \(expected) within \(timeout) (last: \(last.map(String.init) ?? "no answer"))"
        )
    }

    /// The response's status code; `nil` when the server does not answer (yet).
    static func status(host: String, port: Int, path: String) async -> Int? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: blockingStatus(host: host, port: port, path: path))
            }
        }
    }

    private static func blockingStatus(host: String, port: Int, path: String) -> Int? {
        guard let fd = LoopbackSocket.connection(to: host, port: port, timeoutSeconds: 5) else { return nil }
        defer { _ = close(fd) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, LoopbackSocket.sendFlags) }
        guard sent == request.count else { return nil }
        // The status line is all that is needed: "HTTP/1.1 200 OK".
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let line = String(decoding: received.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return nil }
        return Int(parts[1])
    }
}
