import HTTPTypes
import Hummingbird

/// The methods a path takes, for the `Allow` of a 405: read off the router's routes
/// (`Router.routes`), with HEAD wherever GET is, as the router answers it
/// (`.autoGenerateHeadEndpoints`).
///
/// ```swift
/// allowed.methods(forPath: "/publications/7")   // [.get, .put, .patch, .delete, .head]
/// allowed.methods(forPath: "/nothing")          // []
/// ```
struct AllowedMethods: Sendable {
    /// Each path template and the methods its routes take.
    private let templates: [(path: RouterPath, methods: Set<HTTPRequest.Method>)]

    /// The order of `Allow`: the reads, writes and deletions as the API document lists
    /// them, HEAD last; any other method after them.
    private static let order: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .head]

    init(_ routes: [Router<BookStoreRequestContext>.RouteDescription]) {
        var templates: [(path: RouterPath, methods: Set<HTTPRequest.Method>)] = []
        for route in routes {
            if let index = templates.firstIndex(where: { $0.path == route.path }) {
                templates[index].methods.insert(route.method)
            } else {
                templates.append((route.path, [route.method]))
            }
        }
        self.templates = templates
    }

    /// The methods the path's routes take, in ``order``; empty when no route has its shape.
    func methods(forPath path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods: Set<HTTPRequest.Method> = []
        for template in templates
        where template.path.count == segments.count && zip(template.path, segments).allSatisfy({ $0 ~= $1 }) {
            methods.formUnion(template.methods)
        }
        if methods.contains(.get) { methods.insert(.head) }
        return Self.order.filter { methods.contains($0) } + methods.subtracting(Self.order).sorted { $0.rawValue < $1.rawValue }
    }
}
