import Hummingbird
import Logging

/// Logs one line per request with its method, path, status and duration, and, at trace
/// level, one as it starts: which requests were under way when a server stopped or hung.
///
/// ```
/// info bookstore: hb.request.id=3f2a… http.method=GET http.path=/publications http.status=200 http.duration_ms=3 request
/// ```
///
/// Hummingbird's `LogRequestsMiddleware` logs the request as it arrives only, without its
/// status or duration.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        context.logger.trace(
            "request started",
            metadata: [
                "http.method": .string(request.method.rawValue), "http.path": .string(request.uri.path),
            ]
        )
        let response = try await next(request, context)
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
}
