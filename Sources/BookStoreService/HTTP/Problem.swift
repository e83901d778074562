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
        public let uri: String
        public static let invalidBody = Kind(uri: "/problems/invalid-body")
        public static let invalidQuery = Kind(uri: "/problems/invalid-query")
        public static let validationFailed = Kind(uri: "/problems/validation-failed")
        public static let notFound = Kind(uri: "/problems/not-found")
        public static let methodNotAllowed = Kind(uri: "/problems/method-not-allowed")
        /// A write without one of the service's write keys: nothing was written.
        public static let unauthorized = Kind(uri: "/problems/unauthorized")
        public static let bodyTooLarge = Kind(uri: "/problems/body-too-large")
        public static let unsupportedMediaType = Kind(uri: "/problems/unsupported-media-type")
        public static let conflict = Kind(uri: "/problems/conflict")
        public static let unavailable = Kind(uri: "/problems/unavailable")
        /// The disk that holds the store is full: nothing was saved.
        public static let insufficientStorage = Kind(uri: "/problems/insufficient-storage")
        /// The store cannot be used: read-only, damaged, or its server is down.
        public static let storeUnusable = Kind(uri: "/problems/store-unusable")
        public static let requestTimeout = Kind(uri: "/problems/request-timeout")
        /// A request the server cannot read as HTTP at all.
        public static let malformedRequest = Kind(uri: "/problems/malformed-request")
        public static let internalError = Kind(uri: "/problems/internal-error")
        /// Any other HTTP error, described by its status alone.
        public static let generic = Kind(uri: "about:blank")
    }

    /// One field's problem in a refused body or query.
    public struct FieldError: Sendable, Hashable, Encodable {
        public var field: String
        /// A stable, machine-readable code: `unknownField`, `wrongType`, `missingValue`, `valueTooLarge`…
        public var code: String
        public var message: String

        public init(field: String, code: String, message: String) {
            self.field = field
            self.code = code
            self.message = message
        }
    }

    public var status: HTTPResponse.Status
    public var kind: Kind
    public var title: String
    public var detail: String
    public var errors: [FieldError]
    /// Extra members of the body (`migration` for a 503 during a migration).
    public var extensions: [String: JSONValue]
    public var headers: HTTPFields

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
