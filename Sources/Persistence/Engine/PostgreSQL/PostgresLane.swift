import Dispatch

/// A ``PostgresConnection`` and the serial queue it lives on: libpq blocks until the server
/// answers, so every call runs on the queue's thread, never on the cooperative pool.
final class PostgresLane: @unchecked Sendable {
    // The connection is touched only on `queue`, which is what makes this Sendable.
    private let connection: PostgresConnection
    private let queue: DispatchQueue
    let load = LaneLoad()

    private init(connection: PostgresConnection, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }

    /// Connects on a new queue of its own (connecting blocks too, up to `connect_timeout`).
    static func open(_ configuration: PostgresConfiguration, readOnly: Bool, isDurable: Bool = true, label: String) async throws -> PostgresLane {
        let queue = DispatchQueue(label: label)
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(
                    with: Result {
                        PostgresLane(
                            connection: try PostgresConnection(configuration: configuration, readOnly: readOnly, isDurable: isDurable),
                            queue: queue
                        )
                    }
                )
            }
        }
    }

    /// Runs `body` on the lane's queue; cancelling the calling task interrupts it.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await load.counting { try await queue.runInterruptibly(connection, body) }
    }

    /// Closes the connection once the work queued before has run.
    func close() async {
        await withCheckedContinuation { continuation in
            queue.async {
                self.connection.close()
                continuation.resume()
            }
        }
    }
}
