import HTTPTypes
import Hummingbird
import Logging

extension HTTPField.Name {
    /// `X-Request-ID`: the id a request's log lines carry, sent back with its response.
    static let requestID = HTTPField.Name("X-Request-ID")!
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}

/// Gives every request an id — the caller's `X-Request-ID` when it sends a usable one, a
/// random one otherwise — puts it on every log line of the request (as `hb.request.id`,
/// where Hummingbird keeps it) and on the response, and logs one line per request with
/// its method, path, status and duration.
///
/// ```
/// info bookstore: hb.request.id=3f2a… http.method=GET http.path=/publications http.status=200 http.duration_ms=3 request
/// ```
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = request.headers[.requestID].flatMap { Self.isUsable($0) ? $0 : nil } ?? Self.makeID()
        context.logger[metadataKey: "hb.request.id"] = .string(id)
        context.requestID = id
        let started = ContinuousClock.now
        // At trace level: shows which requests were under way when a server stopped or hung.
        context.logger.trace(
            "request started",
            metadata: [
                "http.method": .string(request.method.rawValue), "http.path": .string(request.uri.path),
            ]
        )
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The problem middleware answers every error; this is a last resort.
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            response = try Problem.internalError(requestID: id).response(from: request, context: context)
        }
        response.headers[.requestID] = id
        // Every body is what its Content-Type says; a browser is not to guess otherwise.
        response.headers[.contentTypeOptions] = "nosniff"
        let elapsed = ContinuousClock.now - started
        context.logger.info(
            "request",
            metadata: [
                "http.method": .string(request.method.rawValue),
                "http.path": .string(request.uri.path),
                "http.status": .stringConvertible(response.status.code),
                "http.duration_ms": .stringConvertible(Int((elapsed / .milliseconds(1)).rounded())),
            ]
        )
        return response
    }

    /// 128 random bits in hex. Hummingbird's own ids count up from a random start, which
    /// tells a client how many requests others made in between.
    static func makeID() -> String { RandomHex.bits128() }

    /// Short, printable, no spaces: safe in a header and a log line.
    static func isUsable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
