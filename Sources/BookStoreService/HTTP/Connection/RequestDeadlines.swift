import NIOCore

/// Where a connection is in its current request, and the one deadline that goes with it.
///
/// A value type that returns what to do, so the two handlers that feed it (one sees bytes,
/// one sees HTTP parts) keep no timing logic of their own.
struct RequestDeadlines {
    enum Phase: Equatable {
        /// Between requests: Hummingbird's idle timeout applies.
        case awaitingRequest
        /// A request's first bytes arrived; its head has not been read whole.
        case readingHead
        /// The head was read; its body has not ended.
        case readingBody
        /// The request was read; the service is answering it. No deadline: the grace period
        /// bounds a request's handling at shutdown.
        case answering
    }

    enum Action: Equatable {
        case startTimer(TimeAmount, Phase)
        case cancelTimer
        case none
    }

    let requestHead: TimeAmount
    let requestBody: TimeAmount
    private(set) var phase = Phase.awaitingRequest

    init(_ timeouts: HTTPTimeouts) {
        requestHead = .nanoseconds(Int64(timeouts.requestHead / .nanoseconds(1)))
        requestBody = .nanoseconds(Int64(timeouts.requestBody / .nanoseconds(1)))
    }

    mutating func bytesArrived() -> Action {
        guard phase == .awaitingRequest else { return .none }
        phase = .readingHead
        return .startTimer(requestHead, .readingHead)
    }

    mutating func headRead() -> Action {
        phase = .readingBody
        return .startTimer(requestBody, .readingBody)
    }

    mutating func requestEnded() -> Action {
        phase = .answering
        return .cancelTimer
    }

    /// A response ended: the connection waits for the next request (pipelined bytes already
    /// read start the next head's clock when the decoder hands them on).
    mutating func responseEnded() -> Action {
        guard phase == .answering else { return .none }
        phase = .awaitingRequest
        return .none
    }

    /// Whether a timer started for `phase` still means something when it fires.
    func isCurrent(_ timed: Phase) -> Bool { phase == timed }
}
