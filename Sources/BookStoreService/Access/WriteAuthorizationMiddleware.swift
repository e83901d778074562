import HTTPTypes
import Hummingbird

/// Refuses a write (any method but `GET`, `HEAD` and `OPTIONS`, on any path) that does not
/// carry `Authorization: Bearer <key>` with one of the service's ``WriteKeys``: a 401
/// problem with `WWW-Authenticate: Bearer`, before the request's body is read or anything
/// is written. The key a client sent is never logged or echoed.
struct WriteAuthorizationMiddleware: RouterMiddleware {
    typealias Context = BookStoreRequestContext

    let keys: WriteKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !Self.isRead(request.method) else { return try await next(request, context) }
        guard let header = request.headers[.authorization] else {
            throw Problem.unauthorized(.missing)
        }
        guard let token = Self.bearerToken(header) else {
            throw Problem.unauthorized(.notBearer)
        }
        guard keys.accepts(token) else {
            context.logger.notice("write refused: the key sent is not one of the service's write keys")
            throw Problem.unauthorized(.wrongKey)
        }
        return try await next(request, context)
    }

    static func isRead(_ method: HTTPRequest.Method) -> Bool {
        method == .get || method == .head || method == .options
    }

    /// The token of `Bearer <token>`; the scheme's case does not matter (RFC 9110 11.1).
    static func bearerToken(_ header: String) -> Substring? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop { $0 == " " }
        return token.isEmpty ? nil : token
    }
}

extension Problem {
    /// Why a write was refused for want of a key.
    enum MissingAuthorization {
        case missing
        case notBearer
        case wrongKey
    }

    /// A 401 for a write without a usable key, with the `WWW-Authenticate` challenge
    /// (RFC 6750 section 3: `invalid_token` once a token was sent).
    static func unauthorized(_ reason: MissingAuthorization) -> Problem {
        let (detail, challenge): (String, String) =
            switch reason {
            case .missing:
                ("writes need a key: send Authorization: Bearer <key> with one of the service's write keys", #"Bearer realm="bookstore""#)
            case .notBearer:
                (
                    "the Authorization header is not `Bearer <key>`; send the write key as a bearer token",
                    #"Bearer realm="bookstore", error="invalid_request""#
                )
            case .wrongKey:
                ("the key sent is not one of the service's write keys; nothing was written", #"Bearer realm="bookstore", error="invalid_token""#)
            }
        return Problem(
            .unauthorized,
            type: .unauthorized,
            title: "A write key is needed",
            detail: detail,
            headers: [.wwwAuthenticate: challenge]
        )
    }
}
