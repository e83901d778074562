import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// The service's HTTP/1.1 connections: Hummingbird's, with its idle timeout, and a clock
/// on each request's head and body (see ``RequestClock``).
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
