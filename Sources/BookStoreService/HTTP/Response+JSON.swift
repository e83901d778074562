import Foundation
import HTTPTypes
import Hummingbird

/// The content types the service answers with.
enum ContentType {
    static let json = "application/json"
    static let problemJSON = "application/problem+json"
    static let html = "text/html; charset=utf-8"
}

extension Response {
    /// A response whose body is `value` as JSON, its keys sorted: the same resource is the
    /// same text every time.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, contentType: String = ContentType.json) -> Response {
        data(value.serialized(sortedKeys: true), status: status, contentType: contentType)
    }

    /// A response whose body is `value` encoded as JSON, its keys sorted.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        if let writable = value as? any JSONWritable {
            var buffer = ByteBuffer()
            try writable.writeJSON(into: &buffer)
            return Response(status: status, headers: [.contentType: ContentType.json], body: .init(byteBuffer: buffer))
        }
        return data(try jsonEncoder().encode(value), status: status, contentType: ContentType.json)
    }

    /// The encoder of every JSON body: keys sorted, slashes as they are.
    static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func data(_ data: Data, status: HTTPResponse.Status, contentType: String) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
