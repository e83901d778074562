import HTTPTypes
import Hummingbird

extension HTTPField.Name {
    /// `X-Content-Type-Options`.
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}

/// Sends `X-Content-Type-Options: nosniff` with every response: every body is what its
/// `Content-Type` says, and a browser is not to guess otherwise.
struct ContentTypeOptionsMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentTypeOptions] = "nosniff"
        return response
    }
}
