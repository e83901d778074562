import HTTPTypes
import Hummingbird

/// Every operation of the API: method, path template and handler. The router is built
/// from it, the 405s read it, and the tests check it against the OpenAPI document.
struct RouteTable: Sendable {
    struct Route: Sendable {
        let method: HTTPRequest.Method
        /// The path template as OpenAPI writes it: `/publications/{id}`.
        let path: String
        let handler: @Sendable (Request, BookStoreRequestContext) async throws -> Response
    }

    private(set) var routes: [Route] = []

    mutating func add(
        _ method: HTTPRequest.Method,
        _ path: String,
        _ handler: @escaping @Sendable (Request, BookStoreRequestContext) async throws -> Response
    ) {
        routes.append(Route(method: method, path: path, handler: handler))
    }

    /// The methods the path's routes take (HEAD wherever GET is); empty when no route
    /// has its shape.
    func allowedMethods(forPath path: String) -> [HTTPRequest.Method] {
        let segments = Self.segments(path)
        let methods = routes.filter { route in
            let template = Self.segments(route.path)
            return template.count == segments.count
                && zip(template, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }.map(\.method)
        return methods.contains(.get) ? methods + [.head] : methods
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// Registers every route on `router`.
    func register(on router: Router<BookStoreRequestContext>) {
        for route in routes {
            router.on(RouterPath(route.path), method: route.method) { request, context in
                try await route.handler(request, context)
            }
        }
    }
}
