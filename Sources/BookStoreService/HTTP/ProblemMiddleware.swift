import HTTPTypes
import Hummingbird
import Logging

/// Turns every error a route throws into an `application/problem+json` response, so no
/// refusal escapes as a bare status; an unmatched path with a known shape is a 405 with
/// `Allow`, any other a 404. Errors that are not a client's fault are logged and answered
/// with a 500 that gives nothing away.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    /// What the router's routes take, for the 405s.
    let allowedMethods: AllowedMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try problem(for: error, request: request, context: context).response(from: request, context: context)
        }
    }

    private func problem(for error: any Error, request: Request, context: Context) -> Problem {
        let allowed = allowedMethods.methods(forPath: request.uri.path)
        if !(error is Problem), !allowed.contains(request.method) {
            // No route takes the request, so the router answered it: a path
            // of a known shape is a 405 naming what it takes, any other a 404.
            if !allowed.isEmpty {
                return Problem(
                    .methodNotAllowed,
                    type: .methodNotAllowed,
                    title: "Method not allowed",
                    detail: "\(request.uri.path) takes \(allowed.map(\.rawValue).joined(separator: ", ")), not \(request.method.rawValue)",
                    headers: [.allow: allowed.map(\.rawValue).joined(separator: ", ")]
                )
            }
            return .notFound("there is no resource at \(request.uri.path)")
        }
        if let problem = Problem(domainError: error) {
            return problem
        }
        context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
        return .internalError(requestID: context.requestID)
    }
}
