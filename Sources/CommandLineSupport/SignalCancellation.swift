import ArgumentParser
import Foundation
import UnixSignals

/// Work a command was doing when SIGINT or SIGTERM stopped it, and how it ended.
public struct InterruptedBySignal: Error, CustomStringConvertible {
    /// The signal received.
    public let signal: UnixSignal
    /// What the work threw once cancelled.
    public let error: any Error

    /// The exit status of a process stopped by `signal`, as shells report it (130 for SIGINT,
    /// 143 for SIGTERM), so scripts can tell it from a failure.
    public var exitCode: ExitCode { ExitCode(128 + signal.rawValue) }

    /// What the work threw once cancelled, as the command reports it.
    public var description: String { "\(error)" }
}

/// Runs `body` and, when the process receives SIGINT or SIGTERM meanwhile, cancels it
/// rather than dying on the spot: `body` stops at its next cancellation point (a running
/// statement is interrupted), cleans up, and its error comes back wrapped in
/// ``InterruptedBySignal``. A second signal stops the process at once, as if no handler
/// were installed.
///
/// ```swift
/// do {
///     try await cancellingOnSignals { try await migrator.migrateStore(at: url) }
/// } catch let stopped as InterruptedBySignal {
///     print("error: \(stopped)")
///     throw stopped.exitCode
/// }
/// ```
///
/// When `body` finishes although a signal arrived (it was past its last cancellation
/// point), its result is returned.
public func cancellingOnSignals<T: Sendable>(
    announce: @escaping @Sendable (UnixSignal) -> Void = { _ in },
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
    // Trapping ignores the signals; once the work is over they take their usual effect again.
    defer {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
    return try await withThrowingTaskGroup(of: SignalRaceEvent<T>.self) { group in
        group.addTask {
            do { return .finished(.success(try await body())) } catch { return .finished(.failure(error)) }
        }
        group.addTask {
            for await signal in signals { return .signal(signal) }
            return .watchEnded
        }
        var received: UnixSignal?
        while let event = try await group.next() {
            switch event {
            case .signal(let caught):
                received = caught
                // A second signal takes the default action: the process ends at once.
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
                announce(caught)
                group.cancelAll()
            case .finished(let result):
                group.cancelAll()
                switch (result, received) {
                case (.success(let value), _): return value
                case (.failure(let error), .some(let caught)): throw InterruptedBySignal(signal: caught, error: error)
                case (.failure(let error), nil): throw error
                }
            case .watchEnded:
                continue
            }
        }
        preconditionFailure("the work's task always reports")
    }
}

private enum SignalRaceEvent<T: Sendable>: Sendable {
    case finished(Result<T, any Error>)
    case signal(UnixSignal)
    /// The signal watch was cancelled: the work finished first.
    case watchEnded
}
