import NIOCore

/// Where a connection is in its current request and response, and the one deadline that
/// goes with it.
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
    /// A response's head was written and its end not yet.
    private(set) var responseInFlight = false
    /// The current request's answer has begun (maybe ended): an answer of the server's own
    /// would be a second one.
    private(set) var currentAnswered = false
    /// The current request was answered before its body ended (a 404 or 413 that does not
    /// read the body): when the body ends, the connection awaits the next request.
    private var answeredBeforeItsEnd = false

    init(_ timeouts: HTTPTimeouts) {
        requestHead = TimeAmount(timeouts.requestHead)
        requestBody = TimeAmount(timeouts.requestBody)
    }

    /// Whether the server may answer on its own now (a 408, a malformed request's 400)
    /// without cutting into or doubling another answer.
    var mayAnswer: Bool { !responseInFlight && !currentAnswered }

    mutating func bytesArrived() -> Action {
        guard phase == .awaitingRequest else { return .none }
        phase = .readingHead
        currentAnswered = false
        return .startTimer(requestHead, .readingHead)
    }

    mutating func headRead() -> Action {
        phase = .readingBody
        currentAnswered = false
        answeredBeforeItsEnd = false
        return .startTimer(requestBody, .readingBody)
    }

    mutating func requestEnded() -> Action {
        phase = answeredBeforeItsEnd ? .awaitingRequest : .answering
        answeredBeforeItsEnd = false
        return .cancelTimer
    }

    mutating func responseBegan() {
        responseInFlight = true
        currentAnswered = true
    }

    /// A response ended: after a request read whole, the connection waits for the next one
    /// (pipelined bytes already read start the next head's clock when the decoder hands
    /// them on); before its body ended, it waits for that end.
    mutating func responseEnded() {
        responseInFlight = false
        switch phase {
        case .answering: phase = .awaitingRequest
        case .readingBody: answeredBeforeItsEnd = true
        case .awaitingRequest, .readingHead: break
        }
    }

    /// Whether a timer started for `phase` still means something when it fires.
    func isCurrent(_ timed: Phase) -> Bool { phase == timed }
}

extension TimeAmount {
    init(_ duration: Duration) {
        self = .nanoseconds(Int64(duration / .nanoseconds(1)))
    }
}
