import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// The service's HTTP/1.1 connections: Hummingbird's, with its idle timeout, and a clock
/// on each request's head and body (see ``RequestClock``).
///
/// The clock is the service's own: Hummingbird's one bound on a client is its idle timeout,
/// which each part of a request that arrives puts off (a body sent slowly, piece by piece,
/// is never cut off); it has no limit on how long a request's head or body takes, nor an
/// answer (408) when one is late.
///
/// ```swift
/// Application(router: router, server: BookStoreHTTPChannel.server(timeouts: HTTPTimeouts()))
/// ```
struct BookStoreHTTPChannel: HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let timeouts: HTTPTimeouts

    var responder: Responder { base.responder }

    static func server(timeouts: HTTPTimeouts) -> HTTPServerBuilder {
        let idle = TimeAmount(timeouts.idle)
        return HTTPServerBuilder { responder in
            BookStoreHTTPChannel(base: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idle)), timeouts: timeouts)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeouts = self.timeouts
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let clock = RequestClock(timeouts)
            try pipeline.addHandler(RequestBytesHandler(clock: clock), position: .first)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(RequestPartsHandler(clock: clock), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
