import Foundation
import HummingbirdCore
import NIOCore
import NIOHTTP1

/// One connection's request clock, shared by its two handlers (both on the connection's
/// event loop): ``RequestBytesHandler`` at the front of the pipeline sees a request's first
/// bytes, ``RequestPartsHandler`` after the HTTP decoder sees its head and end.
///
/// When a request's head or body is not in within its time, the client gets a 408 problem
/// (unless its answer has begun: then the connection is only closed) and the connection is
/// closed, which ends the request's body for a route still reading it.
final class RequestClock {
    private var deadlines: RequestDeadlines
    private var timer: Scheduled<Void>?
    /// A refusal held back while another response is being written, sent when it ends.
    private var pendingRefusal: Problem?
    private let timeouts: HTTPTimeouts
    var front: ChannelHandlerContext?

    init(_ timeouts: HTTPTimeouts) {
        self.timeouts = timeouts
        deadlines = RequestDeadlines(timeouts)
    }

    func bytesArrived(_ context: ChannelHandlerContext) { apply(deadlines.bytesArrived(), context) }
    func headRead(_ context: ChannelHandlerContext) { apply(deadlines.headRead(), context) }
    func requestEnded(_ context: ChannelHandlerContext) { apply(deadlines.requestEnded(), context) }
    func responseBegan() { deadlines.responseBegan() }

    func responseEnded() {
        deadlines.responseEnded()
        if let problem = pendingRefusal {
            pendingRefusal = nil
            refuse(problem)
        }
    }

    func stop() {
        timer?.cancel()
        timer = nil
    }

    private func apply(_ action: RequestDeadlines.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .none:
            return
        case .cancelTimer:
            stop()
        case .startTimer(let amount, let phase):
            stop()
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: amount) { [self] in expire(phase) }
        }
    }

    private func expire(_ phase: RequestDeadlines.Phase) {
        guard deadlines.isCurrent(phase) else { return }
        timer = nil
        let what = phase == .readingHead ? "head" : "body"
        let limit = phase == .readingHead ? timeouts.requestHead : timeouts.requestBody
        refuse(
            Problem(
                .requestTimeout,
                type: .requestTimeout,
                title: "Request timeout",
                detail: "the request's \(what) was not received within \(limit); send it faster or on a new connection"
            )
        )
    }

    /// Answers `problem` and closes the connection. While
    /// another response is being written it waits for its end; when the current request was
    /// answered already, the connection is only closed.
    func refuse(_ problem: Problem) {
        guard let front else { return }
        stop()
        if deadlines.responseInFlight {
            pendingRefusal = pendingRefusal ?? problem
            return
        }
        let channel = front.channel
        guard deadlines.mayAnswer else { return channel.close(promise: nil) }
        deadlines.responseBegan()
        // The flush writes to the socket at once when it takes the bytes (a few hundred; a
        // client too slow to take them gets the close alone).
        front.writeAndFlush(NIOAny(RawResponse.bytes(for: problem, allocator: channel.allocator)), promise: nil)
        channel.close(promise: nil)
    }
}

/// The front of a connection's pipeline: a request's first bytes start its head's clock.
final class RequestBytesHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let clock: RequestClock

    init(clock: RequestClock) { self.clock = clock }

    func handlerAdded(context: ChannelHandlerContext) { clock.front = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        clock.stop()
        clock.front = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        clock.bytesArrived(context)
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        clock.stop()
        context.fireChannelInactive()
    }
}

/// After the HTTP decoder: a request's head and end move its clock, and a request that does
/// not keep the connection alive (HTTP/1.0 without `Connection: keep-alive`, or
/// `Connection: close`) says `close`, so the server closes the connection after answering
/// it (RFC 9112 §9.3).
final class RequestPartsHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart
    private let clock: RequestClock

    init(clock: RequestClock) { self.clock = clock }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            clock.headRead(context)
            if !head.isKeepAlive {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return
            }
        case .body:
            break
        case .end:
            clock.requestEnded(context)
        }
        context.fireChannelRead(data)
    }

    /// A request the HTTP decoder cannot read (a bad request line, a head over the size
    /// limit, conflicting lengths) is answered with a problem, as any other refusal, and its
    /// connection closed: nothing after it on the connection can be trusted to be a request.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parseError = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        clock.refuse(Self.problem(for: parseError))
    }

    static func problem(for error: HTTPParserError) -> Problem {
        switch error {
        case .headerOverflow:
            Problem(
                .init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                type: .malformedRequest,
                title: "Request head too large",
                detail:
                    "the request line and headers must be under \(HTTP1Channel.Configuration.DecoderConfiguration().maxHeaderListSize / 1024) KiB together"
            )
        default:
            Problem(
                .badRequest,
                type: .malformedRequest,
                title: "Malformed request",
                detail: "the request is not valid HTTP/1.1 (\(error)); check the request line, the headers and the body's length"
            )
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: clock.responseBegan()
        case .body: break
        case .end: clock.responseEnded()
        }
        context.write(data, promise: promise)
    }
}

/// A response written as bytes, below the HTTP encoder: for a refusal the server makes on
/// its own, outside any route.
enum RawResponse {
    static func bytes(for problem: Problem, allocator: ByteBufferAllocator) -> ByteBuffer {
        let body = problem.body.serialized(sortedKeys: true)
        let head =
            "HTTP/1.1 \(problem.status.code) \(problem.status.reasonPhrase)\r\n"
            + "content-type: \(ContentType.problemJSON)\r\ncontent-length: \(body.count)\r\n"
            + "x-content-type-options: nosniff\r\nconnection: close\r\n\r\n"
        var buffer = allocator.buffer(capacity: head.utf8.count + body.count)
        buffer.writeString(head)
        buffer.writeBytes(body)
        return buffer
    }
}
