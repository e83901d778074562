import Hummingbird

/// A path with an empty segment (`//1`, `/publications/1/`) names no resource: the router
/// would otherwise read it as the path without the empty segment, so one resource would
/// answer at many addresses, each cached and logged apart. 404, as for any unknown path.
struct CanonicalPathMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == "/" || !(path.hasSuffix("/") || path.contains("//")) else {
            throw Problem.notFound("there is no resource at \(path); paths have no empty segments")
        }
        return try await next(request, context)
    }
}
