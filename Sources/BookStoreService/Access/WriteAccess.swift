/// Who may write (`POST`, `PUT`, `PATCH`, `DELETE`) through the service. Reads, `/health`
/// and `/status` are open to anyone who reaches it.
///
/// ```swift
/// configuration.writeAccess = .keys(try WriteKeys(contentsOfFile: "/run/secrets/bookstore_write_keys"))
/// ```
public enum WriteAccess: Sendable {
    /// A write needs `Authorization: Bearer <key>` with one of these keys; otherwise it is
    /// a 401 and nothing is written.
    case keys(WriteKeys)
    /// Anyone may write, and the service only listens on loopback or a Unix domain socket:
    /// beyond them it refuses to start (``ServiceStartError/anonymousWritesBeyondLoopback(_:)``).
    case anonymousOnLoopback
    /// Anyone who reaches the service may write, wherever it listens: a deliberate demo.
    case anonymous

    /// Whether writes need a key.
    var requiresKey: Bool {
        if case .keys = self { true } else { false }
    }
}
