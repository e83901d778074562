import Foundation

@testable import BookStoreService

#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client over a Unix domain socket (or TCP to 127.0.0.1), for the live
/// tests: one request per connection, `Connection: close`, the whole response read.
/// Blocking, so it runs on a thread of its own rather than the cooperative pool.
enum RawHTTPClient {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    enum Target {
        case unixSocket(String)
        case tcp(port: Int)
    }

    static func send(
        _ method: String,
        _ path: String,
        to target: Target,
        body: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> Response {
        try await onThread { try sendBlocking(method, path, to: target, body: body, headers: headers) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static func sendBlocking(_ method: String, _ path: String, to target: Target, body: String?, headers: [String: String]) throws -> Response
    {
        let connection = try Connection(to: target)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        try connection.write(request + "\r\n" + (body ?? ""))
        return try connection.readResponse()
    }

    /// An open connection, for requests sent in parts (a request still in flight when the
    /// server is told to stop). Blocking: call it from a thread of its own (`onThread`).
    final class Connection: @unchecked Sendable {
        private let descriptor: Int32

        init(to target: Target) throws {
            // Connected before it is stored: a failed attempt closes its socket once, here,
            // and deinit (which runs for a fully initialised object even when init throws
            // later) never closes a number another thread may have been given since.
            descriptor = try Self.connected(to: target)
        }

        private static func connected(to target: Target) throws -> Int32 {
            let descriptor: Int32
            let connected: Int32
            switch target {
            case .unixSocket(let socketPath):
                guard var address = unixSocketAddress(socketPath) else { throw Failure(description: "socket path too long") }
                descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
            case .tcp(let port):
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
            guard connected == 0 else {
                let failure = Failure(description: "connect to \(target) failed: errno \(errno)")
                close(descriptor)
                throw failure
            }
            return descriptor
        }

        deinit { close(descriptor) }

        /// Reads until `count` bytes have come (or the connection ends); returns how many came.
        func receive(atLeast count: Int) -> Int {
            var received = 0
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while received < count {
                let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                guard got > 0 else { break }
                received += got
            }
            return received
        }

        /// Makes closing reset the connection at once (`SO_LINGER` 0), as a client that is
        /// killed or gives up does, whatever the server is still sending.
        func resetOnClose() {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }

        /// Keeps what the kernel buffers for this end small, so that a server writing a
        /// long response has to wait for the reads, as it would for a slow client.
        func limitReceiveBuffer(to bytes: Int32) {
            var size = bytes
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }

        func write(_ text: String) throws {
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { throw Failure(description: "write failed: errno \(errno)") }
                sent += count
            }
        }

        /// Reads whatever arrives until the server closes the connection or `timeout` passes
        /// without a byte: the text, and whether the server closed it.
        func readUntilClosed(timeout: Duration) -> (text: String, closed: Bool) {
            var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    received += buffer[0..<count]
                    continue
                }
                // 0: the server closed it; -1 with EAGAIN: nothing came within the timeout.
                return (String(decoding: received, as: UTF8.self), count == 0 || errno == ECONNRESET)
            }
        }

        /// Reads one response whose body has a `Content-Length`, leaving the connection open.
        func readOneResponse(timeout: Duration = .seconds(30)) throws -> String {
            var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let text = String(decoding: received, as: UTF8.self)
                if let split = text.range(of: "\r\n\r\n") {
                    let length =
                        text[..<split.lowerBound].split(separator: "\r\n")
                        .first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                    if text[split.upperBound...].utf8.count >= length { return text }
                }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { throw Failure(description: "the connection ended or went quiet before a whole response: \(text)") }
                received += buffer[0..<count]
            }
        }

        /// Reads until the server closes the connection (`Connection: close`).
        func readResponse() throws -> Response {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received += buffer[0..<count]
            }
            return try RawHTTPClient.parse(String(decoding: received, as: UTF8.self))
        }
    }

    /// Runs blocking socket work on a thread of its own rather than the cooperative pool.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    fileprivate static func parse(_ text: String) throws -> Response {
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no response head in \(text.debugDescription)") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw Failure(description: "bad status line in \(text.debugDescription)")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = try dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    /// The body of a chunked response; a body without its last (empty) chunk was cut off.
    private static func dechunk(_ text: String) throws -> String {
        var rest = Array(text.utf8)[...]
        var body: [UInt8] = []
        let lineEnd: [UInt8] = [13, 10]
        while true {
            guard let end = rest.indices.first(where: { rest[$0...].starts(with: lineEnd) }),
                let size = Int(String(decoding: rest[..<end], as: UTF8.self), radix: 16),
                rest.count >= end - rest.startIndex + 2 + size + 2
            else { throw Failure(description: "a chunked body cut off after \(body.count) bytes") }
            let start = end + 2
            if size == 0 { return String(decoding: body, as: UTF8.self) }
            body += rest[start..<start + size]
            rest = rest[(start + size + 2)...]
        }
    }
}
