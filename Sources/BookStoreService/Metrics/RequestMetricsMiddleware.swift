import CoreMetrics
import Dispatch
import HTTPTypes
import Hummingbird
import NIOPosix
import Synchronization

/// Counts and times every request by route template, method and status, and counts the
/// requests under way: through swift-metrics, with the labels of Hummingbird's
/// `MetricsMiddleware` (`http.route`, `http.request.method`, `http.response.status_code`).
///
/// Unlike Hummingbird's, it leaves a body that is one buffer as it is: Hummingbird writes
/// such a response (head, body and end) in one write, and any other body head first, then
/// each part, so timing it to the last byte would cost every response two more writes (a
/// tenth more CPU per `GET /publications/{id}`). A response with a length is complete when
/// the handler returns it and is timed then; a streamed one (a long list) when its last
/// part is written.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let metrics = RouteMetrics()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = metrics.activeRequests(request.method)
        active.increment()
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The problem middleware, inside this one, answers every error; this is a last resort.
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            metrics.record(route: context.endpointPath, method: request.method, status: status, since: started)
            active.decrement()
            throw error
        }
        let (route, method, status, metrics) = (context.endpointPath, request.method, response.status, self.metrics)
        guard response.body.contentLength == nil else {
            metrics.record(route: route, method: method, status: status, since: started)
            active.decrement()
            return response
        }
        let body = response.body
        response.body = ResponseBody { writer in
            defer {
                metrics.record(route: route, method: method, status: status, since: started)
                active.decrement()
            }
            try await body.write(writer)
        }
        return response
    }
}

/// The metrics of each route, method and status, made when first needed and then found
/// without a lock: each thread keeps the ones it used (two threads taking one lock for
/// every request would wait on each other).
final class RouteMetrics: Sendable {
    struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    struct Recorders: Sendable {
        let requests: Counter
        let duration: Timer
    }

    /// One thread's recorders; only that thread reaches it, which makes it Sendable.
    final class ThreadCache: @unchecked Sendable {
        var recorders: [Key: Recorders] = [:]
    }

    private let shared = Mutex<[Key: Recorders]>([:])
    private let threadCache = ThreadSpecificVariable<ThreadCache>()
    /// The methods of the API and HEAD: made once, read without a lock.
    private let meters: [HTTPRequest.Method: Meter]
    private let otherMeters = Mutex<[HTTPRequest.Method: Meter]>([:])

    init() {
        meters = Dictionary(uniqueKeysWithValues: [HTTPRequest.Method.get, .head, .post, .put, .patch, .delete].map { ($0, Self.meter($0)) })
    }

    private static func meter(_ method: HTTPRequest.Method) -> Meter {
        Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)])
    }

    func activeRequests(_ method: HTTPRequest.Method) -> Meter {
        if let meter = meters[method] { return meter }
        return otherMeters.withLock { meters in
            if let meter = meters[method] { return meter }
            let meter = Self.meter(method)
            meters[method] = meter
            return meter
        }
    }

    /// Counts a request answered with `status`, timed from `since` (uptime nanoseconds).
    /// A request no route matched is counted under `NotFound`, as Hummingbird names it.
    func record(route: String?, method: HTTPRequest.Method, status: HTTPResponse.Status, since: UInt64) {
        let recorders = recorders(for: Key(route: route ?? "NotFound", method: method, status: status.code))
        recorders.requests.increment()
        recorders.duration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- since))
    }

    private func recorders(for key: Key) -> Recorders {
        let cache =
            threadCache.currentValue
            ?? {
                let cache = ThreadCache()
                threadCache.currentValue = cache
                return cache
            }()
        if let recorders = cache.recorders[key] { return recorders }
        let recorders = shared.withLock { shared in
            if let existing = shared[key] { return existing }
            let dimensions = [
                ("http.route", key.route), ("http.request.method", key.method.rawValue), ("http.response.status_code", String(key.status)),
            ]
            let made = Recorders(
                requests: Counter(label: "http.server.requests", dimensions: dimensions),
                duration: Timer(label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds)
            )
            shared[key] = made
            return made
        }
        cache.recorders[key] = recorders
        return recorders
    }
}
