import Hummingbird
import Logging

/// Answers any error that reaches it with a 500 problem naming the request's id, after
/// logging it: ``ProblemMiddleware`` answers every error a route or the router throws, so
/// this catches only what goes wrong between the two (the request metrics). Hummingbird
/// would answer such an error with a bare 500 and no body.
struct LastResortErrorMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return try Problem.internalError(requestID: context.requestID).response(from: request, context: context)
        }
    }
}
