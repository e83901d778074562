#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain TCP sockets on a loopback address, for what the benchmark needs besides its
/// servers: free ports to give them, and a connection to ask them whether they are ready.
enum LoopbackSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `count` different ports nothing listens on now: the kernel picks each when a socket
    /// binds port 0. The sockets are held until all are bound, so the ports differ; another
    /// process could take one before the servers bind it, which on a test machine it does not.
    static func freePorts(_ count: Int, host: String) throws -> [Int] {
        var sockets: [Int32] = []
        defer { for socket in sockets { _ = close(socket) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = try newSocket()
            sockets.append(fd)
            var address = try self.address(host: host, port: 0)
            guard withSocketAddress(&address, { bind(fd, $0, $1) }) == 0 else {
                throw Failure(description: "cannot bind a socket to \(host): errno \(errno)")
            }
            guard
                withSocketAddress(
                    &address,
                    { pointer, _ in
                        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                        return getsockname(fd, pointer, &length)
                    }
                ) == 0
            else {
                throw Failure(description: "cannot read the port bound on \(host): errno \(errno)")
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// A blocking TCP socket connected to `host:port`, reads and writes timing out after
    /// `timeoutSeconds`; `nil` when nothing accepts the connection.
    static func connection(to host: String, port: Int, timeoutSeconds: Int) -> Int32? {
        guard let fd = try? newSocket(), var address = try? address(host: host, port: port) else { return nil }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = setsockopt(fd, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        guard withSocketAddress(&address, { connect(fd, $0, $1) }) == 0 else {
            _ = close(fd)
            return nil
        }
        return fd
    }

    /// Flags for `send`: a server that closed the connection must not end the process with SIGPIPE.
    #if canImport(Glibc)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    static let sendFlags: Int32 = 0  // SO_NOSIGPIPE is set on the socket instead
    private static let streamType = SOCK_STREAM
    #endif

    private static func newSocket() throws -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw Failure(description: "cannot open a socket: errno \(errno)") }
        #if !canImport(Glibc)
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    private static func address(host: String, port: Int) throws -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw Failure(description: "\(host) is not an IPv4 address")
        }
        return address
    }

    private static func withSocketAddress<T>(_ address: inout sockaddr_in, _ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
