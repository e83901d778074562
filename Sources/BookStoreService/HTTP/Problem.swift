import Foundation
import HTTPTypes
import Hummingbird

/// An error answered as `application/problem+json` (RFC 9457): what went wrong, the
/// HTTP status, and for refused bodies one entry per field.
///
/// Every refusal the service makes is one of these, so clients parse one shape:
///
/// ```swift
/// throw Problem(.badRequest, type: .invalidBody, title: "The body is not valid JSON",
///               detail: "unexpected end of input at byte 12")
/// ```
///
/// ```json
/// {"type": "/problems/validation-failed", "title": "The publication breaks the model's rules",
///  "status": 422, "detail": "…", "errors": [{"field": "price", "code": "valueTooLarge", "message": "…"}]}
/// ```
public struct Problem: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    /// The kinds of problem the service reports; `type` in the body.
    public struct Kind: Sendable, Hashable {
        /// The problem type's URI, relative to the service (`/problems/not-found`): the body's `type`.
        public let uri: String
        /// 400: the body is not JSON, is cut off, or is not what the operation takes; `errors` names the fields.
        public static let invalidBody = Kind(uri: "/problems/invalid-body")
        /// 400: a query parameter is unknown or its value does not parse; `errors` names the parameters.
        public static let invalidQuery = Kind(uri: "/problems/invalid-query")
        /// 422: the body parses but breaks the API's limits or the model's rules; `errors` names the fields.
        public static let validationFailed = Kind(uri: "/problems/validation-failed")
        /// 404: no resource has that id, or no route has that path.
        public static let notFound = Kind(uri: "/problems/not-found")
        /// 405: the path exists but takes other methods; the `Allow` header lists them.
        public static let methodNotAllowed = Kind(uri: "/problems/method-not-allowed")
        /// A write without one of the service's write keys: nothing was written.
        public static let unauthorized = Kind(uri: "/problems/unauthorized")
        /// 413: the body is larger than the service accepts: send less.
        public static let bodyTooLarge = Kind(uri: "/problems/body-too-large")
        /// 415: the body's content type is not JSON.
        public static let unsupportedMediaType = Kind(uri: "/problems/unsupported-media-type")
        /// 409: another resource has these unique values, or the resource was changed since it was read: read it again and retry.
        public static let conflict = Kind(uri: "/problems/conflict")
        /// 503: the service is starting, or the store is being migrated or waits for a migration; retry after `Retry-After`.
        public static let unavailable = Kind(uri: "/problems/unavailable")
        /// The disk that holds the store is full: nothing was saved.
        public static let insufficientStorage = Kind(uri: "/problems/insufficient-storage")
        /// The store cannot be used: read-only, damaged, or its server is down.
        public static let storeUnusable = Kind(uri: "/problems/store-unusable")
        /// 408: the request did not arrive in time.
        public static let requestTimeout = Kind(uri: "/problems/request-timeout")
        /// A request the server cannot read as HTTP at all.
        public static let malformedRequest = Kind(uri: "/problems/malformed-request")
        /// 500: the service failed; the detail gives the request id the log has the error under.
        public static let internalError = Kind(uri: "/problems/internal-error")
        /// Any other HTTP error, described by its status alone.
        public static let generic = Kind(uri: "about:blank")
    }

    /// One field's problem in a refused body or query.
    public struct FieldError: Sendable, Hashable, Encodable {
        /// The field or query parameter, as the client named it (`price`, `sort`).
        public var field: String
        /// A stable, machine-readable code: `unknownField`, `wrongType`, `missingValue`, `valueTooLarge`…
        public var code: String
        /// What is wrong with it, in a sentence.
        public var message: String

        /// A field's problem: its name, a stable code and a message.
        public init(field: String, code: String, message: String) {
            self.field = field
            self.code = code
            self.message = message
        }
    }

    /// The HTTP status of the response.
    public var status: HTTPResponse.Status
    /// What kind of problem it is: the body's `type`.
    public var kind: Kind
    /// A short, fixed summary of the kind (`The request body is invalid`): the body's `title`.
    public var title: String
    /// What went wrong this time, with what to do: the body's `detail`.
    public var detail: String
    /// One entry per refused field or parameter; empty for the other problems.
    public var errors: [FieldError]
    /// Extra members of the body (`migration` for a 503 during a migration).
    public var extensions: [String: JSONValue]
    /// Headers to send with the response (`Retry-After` on a 503, `Allow` on a 405).
    public var headers: HTTPFields

    /// A problem answered with `status`; the `type` is the kind, `title` and `detail` the body's.
    public init(
        _ status: HTTPResponse.Status,
        type kind: Kind,
        title: String,
        detail: String,
        errors: [FieldError] = [],
        extensions: [String: JSONValue] = [:],
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.errors = errors
        self.extensions = extensions
        self.headers = headers
    }

    /// `status title: detail (field: message; …)`, for logs.
    public var description: String {
        "\(status.code) \(title): \(detail)"
            + (errors.isEmpty ? "" : " (" + errors.map { "\($0.field): \($0.message)" }.joined(separator: "; ") + ")")
    }

    /// The body as JSON.
    public var body: JSONValue {
        var members = extensions
        members["type"] = .string(kind.uri)
        members["title"] = .string(title)
        members["status"] = .number(Double(status.code))
        members["detail"] = .string(detail)
        if !errors.isEmpty {
            members["errors"] = .array(errors.map { ["field": .string($0.field), "code": .string($0.code), "message": .string($0.message)] })
        }
        return .object(members)
    }

    /// The `application/problem+json` response, with the problem's own headers. Written
    /// here rather than by the context's encoder: an `HTTPResponseError` answers for any
    /// context, and its content type is not the encoder's.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let text = ByteBuffer(bytes: body.serialized(sortedKeys: true))
        var response = Response(status: status, headers: [.contentType: ContentType.problemJSON], body: .init(byteBuffer: text))
        response.headers.append(contentsOf: headers)
        return response
    }
}

extension Problem {
    /// A 404 for a resource that does not exist.
    static func notFound(_ detail: String) -> Problem {
        Problem(.notFound, type: .notFound, title: "Not found", detail: detail)
    }

    /// A 400 for a body that is not what the operation takes.
    static func invalidBody(_ detail: String, errors: [FieldError] = []) -> Problem {
        Problem(.badRequest, type: .invalidBody, title: "The request body is invalid", detail: detail, errors: errors)
    }

    /// A 400 for query parameters that are unknown or whose values do not parse.
    static func invalidQuery(_ errors: [FieldError]) -> Problem {
        Problem(
            .badRequest,
            type: .invalidQuery,
            title: "The query is invalid",
            detail: errors.map(\.message).joined(separator: "; "),
            errors: errors
        )
    }
}
