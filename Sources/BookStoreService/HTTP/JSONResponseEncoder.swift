import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The content types the service answers with.
enum ContentType {
    static let json = "application/json"
    static let problemJSON = "application/problem+json"
    static let html = "text/html; charset=utf-8"
}

/// How the service's handlers' `ResponseEncodable` results become responses
/// (``BookStoreRequestContext/responseEncoder``): a 200 whose body is the value as JSON,
/// keys sorted, so that the same resource is the same text every time.
///
/// Hummingbird's own (`JSONEncoder`) answers `application/json; charset=utf-8` with keys in
/// declaration order; the service's bodies are `application/json` (JSON is UTF-8, RFC 8259)
/// with sorted keys, as they always were. A ``JSONWritable`` value writes its own JSON, the
/// same bytes without `JSONEncoder`'s cost.
///
/// ```swift
/// routes.get("{id}") { _, context in try await repository.publication(try PublicationRoutes.id(context)) }
/// // 200, Content-Type: application/json, {"firstName":"Bill","id":1,…}
/// ```
public struct JSONResponseEncoder: ResponseEncoder, Sendable {
    /// The service's encoder.
    public init() {}

    /// A 200 `application/json` response whose body is `value`, keys sorted.
    public func encode<Value: Encodable>(_ value: Value, from request: Request, context: some RequestContext) throws -> Response {
        let body: ByteBuffer
        // The type, not the value, is cast: a resource in an existential would be boxed on
        // the heap (it is larger than an existential's inline room) for every response.
        if let writable = Value.self as? any JSONWritable.Type {
            body = try writable.json(of: value)
        } else {
            body = ByteBuffer(bytes: try Response.jsonEncoder().encode(value))
        }
        return Response(status: .ok, headers: [.contentType: ContentType.json], body: .init(byteBuffer: body))
    }
}

extension JSONWritable {
    /// `value`, an instance of this type, written as JSON.
    fileprivate static func json<Value>(of value: Value) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        try (value as! Self).writeJSON(into: &buffer)
        return buffer
    }
}

extension Response {
    /// The encoder of every JSON body that is not ``JSONWritable``: keys sorted, slashes as
    /// they are.
    static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
