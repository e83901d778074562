import HTTPTypes
import Hummingbird

extension HTTPField.Name {
    /// `X-Request-ID`: the id a request's log lines carry, sent back with its response.
    static let requestID = HTTPField.Name("X-Request-ID")!
}

/// Gives every request an id — the caller's `X-Request-ID` when it sends a usable one, a
/// random one otherwise — puts it on every log line of the request (as `hb.request.id`,
/// where Hummingbird keeps it) and in ``BookStoreRequestContext/requestID``, and sends it
/// back on the response.
///
/// Hummingbird's own ids count up from a random start (which tells a client how many
/// requests others made in between) and are not echoed back, hence this middleware.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = request.headers[.requestID].flatMap { Self.isUsable($0) ? $0 : nil } ?? Self.makeID()
        context.logger[metadataKey: "hb.request.id"] = .string(id)
        context.requestID = id
        var response = try await next(request, context)
        response.headers[.requestID] = id
        return response
    }

    /// 128 random bits in hex.
    static func makeID() -> String { RandomHex.bits128() }

    /// Short, printable, no spaces: safe in a header and a log line.
    static func isUsable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
