#if canImport(Glibc)
import Glibc
#endif

/// The service cannot start where it was asked to.
///
/// ```
/// bookstore: cannot listen on http://127.0.0.1:8080: another process is listening there; stop it, or pick another --port
/// ```
public enum ServiceStartError: Error, Sendable, CustomStringConvertible {
    /// Another process listens at the address (for a Unix domain socket: a server answers on it).
    case addressInUse(ServiceConfiguration.Address)
    /// Writes would be open to anyone who reaches an address beyond this machine
    /// (``WriteAccess/anonymousOnLoopback``).
    case anonymousWritesBeyondLoopback(ServiceConfiguration.Address)

    /// What stopped the service from starting, and what to do.
    public var description: String {
        switch self {
        case .addressInUse(let address):
            let option = if case .unixSocket = address { "--unix-socket path" } else { "--port (or --host)" }
            return "cannot listen on \(address): another process is listening there; stop it, or pick another \(option)"
        case .anonymousWritesBeyondLoopback(let address):
            return "will not listen on \(address) without a write key: anyone who reaches it could change or delete every publication. "
                + "Make a key file (`openssl rand -base64 32 > bookstore-write-keys; chmod 600 bookstore-write-keys`) and pass "
                + "--write-key-file bookstore-write-keys (or BOOKSTORE_WRITE_KEY_FILE); or listen on 127.0.0.1; "
                + "or, for a deliberate demo, pass --allow-anonymous-writes"
        }
    }
}

/// The address of a Unix domain socket at a path; `nil` for a path too long for one.
func unixSocketAddress(_ path: String) -> sockaddr_un? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: bytes)
        buffer[bytes.count] = 0
    }
    return address
}

/// Whether a server listens on a Unix domain socket file.
enum UnixSocketProbe {
    /// Only a refused connection (`ECONNREFUSED`: no process has the socket open any more)
    /// makes the file stale. Anything else — accepted, a full backlog (`EAGAIN`, the
    /// connection being made without blocking), no permission — may be a live server,
    /// whose socket is not to be taken.
    static func isStale(_ path: String) -> Bool {
        guard var address = unixSocketAddress(path) else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected != 0 && errno == ECONNREFUSED
    }
}
